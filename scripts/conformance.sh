#!/usr/bin/env bash
# Runs the official MCP conformance suite (server scenarios) through the gateway:
#   npm run test:conformance
#
# Starts `node dist/main.js` (the machine's Node) on a free loopback port, fronting
# examples/conformance/server.mjs with prefix "", runs the suite (under the Node 22
# that scripts/install-conformance.sh puts in .tools/) once per spec version it has
# server scenarios for, stops the gateway, prints per-version results and a last line
#   conformance: N passed, N failed
# counted from the suite's checks.json files. Exits non-zero on any failed check.
#
# Environment:
#   CONFORMANCE_MODE     upstream mode: shared | per-session | auto (default auto:
#                        per-session if the gateway's config accepts it, else shared)
#   CONFORMANCE_SUITE    the suite's --suite: active | all | pending (default all:
#                        "active" leaves out the scenarios the suite marks pending)
#   CONFORMANCE_VERSIONS spec versions to try (default "2025-03-26 2025-06-18 2025-11-25")
#   CONFORMANCE_SCENARIO run only these scenarios (space-separated names), each on its own
#   CONFORMANCE_EXCLUDE  without CONFORMANCE_SCENARIO: run every scenario the suite lists for the
#                        version except these (space-separated shell patterns), each on its own
#   CONFORMANCE_PACKAGE_VERSION  the suite's version (default: the stable one install-conformance
#                        pins; 0.2.0-alpha.x has the 2026-07-28 scenarios)
#   CONFORMANCE_OUT      results folder (default .tools/conformance-results)
#   CONFORMANCE_TIMEOUT  seconds per suite run (default 300)
#   CONFORMANCE_UPSTREAM how the gateway reaches the fixture: stdio (default: a child process)
#                        or http (examples/conformance/http.mjs serves it over Streamable HTTP
#                        on a loopback port, and the gateway fronts that as `transport: http`)
#                        or dual (the same with --dual: a dual-era server whose server/discover
#                        names only 2026-07-28, as the suite's reference server's does; the
#                        gateway learns its era, `protocolVersion: auto`)
#   CONFORMANCE_DIRECT   1 (with http or dual): the suite runs against the fixture directly too,
#                        same versions and scenarios (results under "direct-<version>"); a check
#                        that passes directly and not through the gateway counts as a failure
#   CONFORMANCE_MODERN   1: the gateway fronts examples/modern/server.mjs too (a 2026-07-28-only
#                        server over Streamable HTTP, `protocolVersion: auto`, prefix ""): the
#                        input-required-result-* scenarios reach it, the others the fixture above
#   CONFORMANCE_TASKS    1: the tasks extension's scenarios (tasks-*, io.modelcontextprotocol/tasks,
#                        every 0.2.0-alpha): the gateway fronts examples/tasks/server.mjs (a server that
#                        knows nothing of tasks) with the `tasks:` lists of examples/tasks/gateway.yaml,
#                        and the suite runs every tasks-* scenario it lists (or CONFORMANCE_SCENARIO),
#                        each on its own, without --spec-version (they run on the 2026-07-28 wire);
#                        results under "tasks". CONFORMANCE_VERSIONS is ignored.
#   CONFORMANCE_REPLICAS N (default 1): N gateways with the same config on one throwaway
#                        redis-server (free port, no persistence; `sessions.store: redis`), behind
#                        scripts/rr-proxy.mjs, which sends each request to the next replica in turn:
#                        the suite talks to the proxy, so consecutive requests alternate replicas
#   CONFORMANCE_PINNING  warn: the gateway runs with `pinning: { mode: warn, lockFile }`, the lock
#                        written by `mcpgw pin` on the same config just before (its output in
#                        pin.log); a definition the lock does not pin is served and logged, and the
#                        count (mcpgw_tool_definition_changes_total) is printed after the suite
#   CONFORMANCE_GUARDRAILS 1: the gateway runs with both built-in guardrails on, redacting
#                        (`interceptors: [secrets, pii]`): a check the suite fails then is a false
#                        positive of theirs on its payloads (docs/guardrails.md)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

MODE="${CONFORMANCE_MODE:-auto}"
SUITE="${CONFORMANCE_SUITE:-all}"
VERSIONS="${CONFORMANCE_VERSIONS:-2025-03-26 2025-06-18 2025-11-25}"
OUT="${CONFORMANCE_OUT:-$ROOT/.tools/conformance-results}"
RUN_TIMEOUT="${CONFORMANCE_TIMEOUT:-300}"
UPSTREAM="${CONFORMANCE_UPSTREAM:-stdio}"
TASKS="${CONFORMANCE_TASKS:-}"
REPLICAS="${CONFORMANCE_REPLICAS:-1}"
GUARDRAILS_JSON=""
case "${CONFORMANCE_GUARDRAILS:-}" in
  "") ;;
  1) GUARDRAILS_JSON='"interceptors": [{ "name": "secrets", "action": "redact" }, { "name": "pii", "action": "redact" }],' ;;
  *) echo "conformance: CONFORMANCE_GUARDRAILS must be 1 or unset" >&2; exit 2 ;;
esac
case "$REPLICAS" in [1-9]) ;; *) echo "conformance: CONFORMANCE_REPLICAS must be 1..9" >&2; exit 2 ;; esac
if [ "$TASKS" = 1 ]; then
  [ "$UPSTREAM" = stdio ] || { echo "conformance: CONFORMANCE_TASKS=1 fronts the tasks fixture over stdio only" >&2; exit 2; }
  # The extension scenarios are on no spec version's list: "tasks" only names their results.
  VERSIONS=tasks
  # The stable suite (0.1.x) has none; every 0.2.0-alpha (.7 to .12) has the same ten.
  export CONFORMANCE_PACKAGE_VERSION="${CONFORMANCE_PACKAGE_VERSION:-0.2.0-alpha.12}"
fi
case "$UPSTREAM" in stdio | http | dual) ;; *) echo "conformance: CONFORMANCE_UPSTREAM must be stdio, http or dual" >&2; exit 2 ;; esac
DIRECT="${CONFORMANCE_DIRECT:-}"
[ "$DIRECT" != 1 ] || [ "$UPSTREAM" != stdio ] || { echo "conformance: CONFORMANCE_DIRECT=1 needs CONFORMANCE_UPSTREAM http or dual" >&2; exit 2; }
case "$MODE" in shared | per-session | auto) ;; *) echo "conformance: CONFORMANCE_MODE must be shared, per-session or auto" >&2; exit 2 ;; esac
PINNING="${CONFORMANCE_PINNING:-}"
case "$PINNING" in "" | warn) ;; *) echo "conformance: CONFORMANCE_PINNING must be warn (or unset)" >&2; exit 2 ;; esac

# --- tools -------------------------------------------------------------------------
eval "$(timeout 600 "$ROOT/scripts/install-conformance.sh" | grep -E '^(NODE22|CONFORMANCE)=')"
suite() { "$NODE22" "$CONFORMANCE" "$@"; }
[ -f dist/main.js ] || npm run build >&2

rm -rf "$OUT"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
GW_PIDS=()   # the gateway replicas (one unless CONFORMANCE_REPLICAS)
GW_BASES=()  # their base URLs (http://127.0.0.1:PORT)
PROXY_PID="" # scripts/rr-proxy.mjs in front of them (CONFORMANCE_REPLICAS > 1)
REDIS_PID="" # their redis-server (CONFORMANCE_REPLICAS > 1)

# TERM, up to $2 tenths of a second, then KILL; reaps it.
stop_pid() {
  local pid="$1" tenths="${2:-100}"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 "$tenths"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
stop_gateway() {
  if [ -n "$PROXY_PID" ]; then stop_pid "$PROXY_PID" 20; PROXY_PID=""; fi
  local pid
  for pid in "${GW_PIDS[@]}"; do stop_pid "$pid" 100; done
  GW_PIDS=()
  GW_BASES=()
}
stop_redis() {
  if [ -n "$REDIS_PID" ]; then stop_pid "$REDIS_PID" 50; REDIS_PID=""; fi
}
FIXTURE_PID=""
stop_fixture() {
  [ -n "$FIXTURE_PID" ] || return 0
  kill -TERM "$FIXTURE_PID" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$FIXTURE_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$FIXTURE_PID" 2>/dev/null || true
  wait "$FIXTURE_PID" 2>/dev/null || true
  FIXTURE_PID=""
}
trap 'stop_gateway; stop_redis; stop_fixture; rm -rf "$WORK"' EXIT

# With CONFORMANCE_UPSTREAM=http (or dual), the fixture runs behind its own Streamable HTTP server.
UPSTREAM_JSON=""
if [ "$UPSTREAM" != stdio ]; then
  DUAL_FLAG=""
  [ "$UPSTREAM" = dual ] && DUAL_FLAG="--dual"
  # shellcheck disable=SC2086 # an optional flag
  node "$ROOT/examples/conformance/http.mjs" --port 0 $DUAL_FLAG >"$WORK/fixture.out" 2>"$OUT/fixture-http.log" &
  FIXTURE_PID=$!
  FIXTURE_URL=""
  for _ in $(seq 1 100); do
    FIXTURE_URL="$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$WORK/fixture.out" | head -n1 || true)"
    [ -n "$FIXTURE_URL" ] && break
    sleep 0.1
  done
  if [ -z "$FIXTURE_URL" ]; then
    echo "conformance: the fixture's HTTP server did not start:" >&2
    cat "$OUT/fixture-http.log" >&2
    exit 1
  fi
  UPSTREAM_JSON="\"transport\": \"http\", \"url\": \"$FIXTURE_URL\","
elif [ "$TASKS" = 1 ]; then
  # The tasks fixture, with the task-supporting tools of examples/tasks/gateway.yaml.
  UPSTREAM_JSON="\"transport\": \"stdio\", \"command\": \"node\", \"args\": [\"$ROOT/examples/tasks/server.mjs\"],
      \"tasks\": { \"tools\": [\"slow_compute\", \"protocol_error_job\", \"confirm_delete\", \"multi_input\"],
                 \"requiredTools\": [\"failing_job\", \"test_tool_with_task\"] },"
else
  UPSTREAM_JSON="\"transport\": \"stdio\", \"command\": \"node\", \"args\": [\"$ROOT/examples/conformance/server.mjs\"],"
fi
MODERN_PID=""
MODERN_JSON=""
if [ "${CONFORMANCE_MODERN:-}" = 1 ]; then
  node "$ROOT/examples/modern/server.mjs" --port 0 >"$WORK/modern.out" 2>"$OUT/modern-fixture.log" &
  MODERN_PID=$!
  MODERN_URL=""
  for _ in $(seq 1 100); do
    MODERN_URL="$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$WORK/modern.out" | head -n1 || true)"
    [ -n "$MODERN_URL" ] && break
    sleep 0.1
  done
  if [ -z "$MODERN_URL" ]; then
    echo "conformance: the modern fixture did not start:" >&2
    cat "$OUT/modern-fixture.log" >&2
    exit 1
  fi
  MODERN_JSON=", { \"name\": \"modern\", \"transport\": \"http\", \"url\": \"$MODERN_URL\", \"prefix\": \"\", \"timeoutMs\": 30000 }"
fi
trap 'stop_gateway; stop_redis; stop_fixture; [ -n "$MODERN_PID" ] && kill "$MODERN_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# With CONFORMANCE_REPLICAS > 1: one throwaway redis-server for all replicas.
SESSIONS_JSON=""
REDIS_PORT=""
if [ "$REPLICAS" -gt 1 ]; then
  command -v redis-server >/dev/null || { echo "conformance: CONFORMANCE_REPLICAS needs redis-server" >&2; exit 1; }
  for _ in 1 2 3 4 5; do # a free port may be taken between the probe and the bind: retry
    REDIS_PORT="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" >"$OUT/redis.log" 2>&1 &
    REDIS_PID=$!
    if node -e '
      const net = require("net"); const port = Number(process.argv[1]); const end = Date.now() + 5000;
      (function ping() {
        const s = net.connect(port, "127.0.0.1", () => s.write("PING\r\n"));
        s.on("data", (d) => process.exit(String(d).startsWith("+PONG") ? 0 : 1));
        s.on("error", () => { s.destroy(); if (Date.now() > end) process.exit(1); setTimeout(ping, 100); });
      })();' "$REDIS_PORT" && kill -0 "$REDIS_PID" 2>/dev/null; then
      break
    fi
    stop_redis
  done
  [ -n "$REDIS_PID" ] || { echo "conformance: redis-server did not start:" >&2; cat "$OUT/redis.log" >&2; exit 1; }
  SESSIONS_JSON="\"sessions\": { \"store\": \"redis\", \"redisUrl\": \"redis://127.0.0.1:$REDIS_PORT\" },"
fi

# With CONFORMANCE_PINNING=warn: the lock `mcpgw pin` writes before the gateway starts.
PINNING_JSON=""
[ "$PINNING" = warn ] && PINNING_JSON="\"pinning\": { \"mode\": \"warn\", \"lockFile\": \"$WORK/pins.json\" },"

# Starts one gateway process with config $1, logging to $2; appends its pid to GW_PIDS and
# sets GW_URL. Returns 2 when the gateway rejects the config, 1 on any other start-up failure.
start_one() {
  local cfg="$1" log="$2" pid
  node dist/main.js --config "$cfg" >"$log" 2>&1 &
  pid=$!
  GW_PIDS+=("$pid")
  GW_URL=""
  for _ in $(seq 1 300); do # up to 30 s
    GW_URL="$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n1 || true)"
    [ -n "$GW_URL" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      local rc=0
      wait "$pid" || rc=$?
      [ "$rc" = 2 ] && return 2
      echo "conformance: gateway exited with $rc at start-up:" >&2
      cat "$log" >&2
      return 1
    fi
    sleep 0.1
  done
  if [ -z "$GW_URL" ]; then
    echo "conformance: gateway did not start within 30 s:" >&2
    cat "$log" >&2
    return 1
  fi
  # Wait until the upstream has a ready worker (its catalog is loaded).
  local base="${GW_URL%/mcp}"
  for _ in $(seq 1 100); do
    node -e "fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" "$base/readyz" &&
      GW_BASES+=("$base") && return 0
    sleep 0.1
  done
  echo "conformance: gateway not ready within 10 s" >&2
  return 1
}

# Starts the gateway (CONFORMANCE_REPLICAS of them, and the proxy in front) with upstream mode
# $1; sets URL, the one the suite is given. Returns 2 when the gateway rejects the config, 1 on
# any other start-up failure; on failure, whatever it started is stopped.
start_gateway() {
  local mode="$1" cfg="$WORK/gateway-$1.json" rc=0
  # Per-session: one worker per client session. The suite opens a session per scenario and
  # closes it without DELETE (the SDK client's close() does not end the session), so idle
  # workers must be reaped quickly and the cap must cover the sessions opened meanwhile.
  local pool='{ "min": 1, "max": 4 }'
  # Spares: warm workers ready for the next session. Some 2026-07-28 checks read a tool's first SSE
  # frame within 600 ms, and each stateless request gets a worker of its own: a cold child
  # process (spawn + initialize) may not make it on a loaded machine, so keep a few warm.
  [ "$mode" = per-session ] && pool='{ "max": 32, "idleTimeoutMs": 2000, "spares": 4 }'
  cat >"$cfg" <<EOF
{
  "listen": { "host": "127.0.0.1", "port": 0 },
  "path": "/mcp",
  "logLevel": "${CONFORMANCE_LOG_LEVEL:-warn}",
  $SESSIONS_JSON
  $PINNING_JSON
  $GUARDRAILS_JSON
  "upstreams": [
    {
      "name": "conformance",
      $UPSTREAM_JSON
      "mode": "$mode",
      "prefix": "",
      "pool": $pool,
      "timeoutMs": 30000
    }$MODERN_JSON
  ]
}
EOF
  if [ "$PINNING" = warn ]; then
    # The same upstreams, started once more by `mcpgw pin` (nothing served), to write the lock.
    if ! timeout 120 node dist/main.js pin --config "$cfg" >"$OUT/pin.log" 2>&1; then
      echo "conformance: mcpgw pin failed:" >&2
      cat "$OUT/pin.log" >&2
      return 1
    fi
  fi
  if [ "$REPLICAS" = 1 ]; then
    start_one "$cfg" "$OUT/gateway-$mode.log" || rc=$?
    [ "$rc" = 0 ] || { stop_gateway; return "$rc"; }
    URL="$GW_URL"
    return 0
  fi
  local i bases=()
  for i in $(seq 1 "$REPLICAS"); do
    start_one "$cfg" "$OUT/gateway-$mode-$i.log" || rc=$?
    [ "$rc" = 0 ] || { stop_gateway; return "$rc"; }
    bases+=("${GW_URL%/mcp}")
  done
  node "$ROOT/scripts/rr-proxy.mjs" --port 0 "${bases[@]}" >"$WORK/proxy.out" 2>"$OUT/rr-proxy.log" &
  PROXY_PID=$!
  local base=""
  for _ in $(seq 1 100); do
    base="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$WORK/proxy.out" | head -n1 || true)"
    [ -n "$base" ] && break
    sleep 0.1
  done
  if [ -z "$base" ]; then
    echo "conformance: rr-proxy did not start:" >&2
    cat "$OUT/rr-proxy.log" >&2
    stop_gateway
    return 1
  fi
  URL="$base/mcp"
  echo "conformance: $REPLICAS replicas (${bases[*]}) on redis 127.0.0.1:$REDIS_PORT, round-robin proxy at $URL" >&2
}

used_mode="$MODE"
if [ "$MODE" = auto ]; then
  used_mode=per-session
  rc=0
  start_gateway per-session || rc=$?
  if [ "$rc" = 2 ]; then
    echo "conformance: the gateway's config does not accept mode per-session yet; using shared" >&2
    used_mode=shared
    rc=0
    start_gateway shared || rc=$?
  fi
  [ "$rc" = 0 ] || exit 1
else
  rc=0
  start_gateway "$MODE" || rc=$?
  if [ "$rc" = 2 ]; then
    echo "conformance: the gateway rejected its config (mode $MODE):" >&2
    cat "$OUT/gateway-$MODE"*.log >&2
  fi
  [ "$rc" = 0 ] || exit 1
fi
echo "conformance: gateway at $URL (upstream mode $used_mode, over $UPSTREAM${MODERN_PID:+, with the modern fixture}${TASKS:+, the tasks fixture}${GUARDRAILS_JSON:+, guardrails secrets and pii on}), suite '$SUITE'"

# --- the suite, once per spec version ------------------------------------------------
# One version's runs against $2 (the gateway, or the fixture directly), results in $3.
run_version() {
  local v="$1" url="$2" dir="$3" listed spec selections s x skip sel rc worst
  if [ "$v" = tasks ]; then
    # Extension scenarios: on no version's list, run without --spec-version (the suite then
    # speaks 2026-07-28 to the server).
    listed="$(suite list --server | sed -nE 's/^  - (tasks-[^ ]+) \[extension\]$/\1/p')"
    spec=""
  else
    listed="$(suite list --server --spec-version "$v" | sed -nE 's/^  - ([^ ]+).*/\1/p')"
    spec="--spec-version $v"
  fi
  if [ -z "$listed" ]; then
    echo "conformance: $v: the suite has no server scenarios for this version; skipped"
    [ "$v" = tasks ] && echo "conformance: tasks: no tasks-* scenario listed (0.2.0-alpha.x has them, 0.1.x not)" >&2 && exit 1
    return 1
  fi
  mkdir -p "$dir"
  # One run for the suite, or one per named scenario; the worst exit code counts.
  selections=()
  if [ -n "${CONFORMANCE_SCENARIO:-}" ]; then
    for s in $CONFORMANCE_SCENARIO; do selections+=("--scenario $s"); done
  elif [ -n "${CONFORMANCE_EXCLUDE:-}" ] || [ "$v" = tasks ]; then
    for s in $listed; do
      skip=""
      # shellcheck disable=SC2254 # the patterns are meant to match
      for x in ${CONFORMANCE_EXCLUDE:-}; do case "$s" in $x) skip=1 ;; esac; done
      [ -n "$skip" ] && echo "conformance: $v: $s left out (CONFORMANCE_EXCLUDE)" || selections+=("--scenario $s")
    done
  else
    selections+=("--suite $SUITE")
  fi
  echo "conformance: $v: running against $url (log: $dir/suite.log)"
  worst=0
  : >"$dir/suite.log"
  for sel in "${selections[@]}"; do
    rc=0
    # shellcheck disable=SC2086 # "$sel" is a flag and its value
    # shellcheck disable=SC2086 # "$spec" too
    timeout --kill-after=10 "$RUN_TIMEOUT" "$NODE22" "$CONFORMANCE" server --url "$url" $spec -o "$dir" $sel >>"$dir/suite.log" 2>&1 || rc=$?
    [ "$rc" = 124 ] && echo "conformance: $v: $sel timed out after ${RUN_TIMEOUT}s" >&2
    [ "$rc" -gt "$worst" ] && worst=$rc
  done
  echo "$worst" >"$dir/exit-code"
}

ran=()
for v in $VERSIONS; do
  run_version "$v" "$URL" "$OUT/$v" && ran+=("$v")
done

# With CONFORMANCE_PINNING=warn: what the gateways served that the lock did not pin (information,
# not a failure: the fixture's toggled tools and prompts appear after the lock was written).
if [ "$PINNING" = warn ]; then
  for base in "${GW_BASES[@]}"; do
    node -e '
      fetch(process.argv[1] + "/metrics").then((r) => r.text()).then((text) => {
        const lines = text.split("\n").filter((l) => l.startsWith("mcpgw_tool_definition_changes_total{"));
        const total = lines.reduce((n, l) => n + Number(l.split(" ").pop()), 0);
        console.log(`conformance: pinning warn at ${process.argv[1]}: ${total} definition(s) served unpinned` +
          (lines.length ? ` (${lines.join(", ")})` : ""));
      }, (e) => console.log(`conformance: pinning warn: /metrics unreadable: ${e.message}`));' "$base" || true
  done
fi

stop_gateway

# The same runs against the fixture itself: what passes there must pass through the gateway.
if [ "$DIRECT" = 1 ]; then
  for v in "${ran[@]}"; do run_version "$v" "$FIXTURE_URL" "$OUT/direct-$v" || true; done
fi

# --- results ------------------------------------------------------------------------
CONFORMANCE_DIRECT="$DIRECT" CONFORMANCE_DIRECT="$DIRECT" node - "$OUT" "${ran[@]}" <<'EOF'
const fs = require('node:fs');
const path = require('node:path');
const [out, ...versions] = process.argv.slice(2);
const direct = process.env.CONFORMANCE_DIRECT === '1';
/** Each scenario run's checks in `dir`, in name order. */
function runsOf(dir) {
  if (!fs.existsSync(dir)) return [];
  const runs = fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, 'checks.json')));
  return runs
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((r) => ({ scenario: r.name.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, ''), checks: JSON.parse(fs.readFileSync(path.join(dir, r.name, 'checks.json'), 'utf8')) }));
}
let passed = 0, failed = 0;
for (const v of versions) {
  const dir = path.join(out, v);
  const exitCode = Number(fs.readFileSync(path.join(dir, 'exit-code'), 'utf8'));
  const runs = runsOf(dir);
  // With CONFORMANCE_DIRECT: the checks against the fixture itself. One the fixture fails too is
  // reported, not counted; one that passed there and is not passed here is counted.
  const passedDirectly = new Set();
  const failedDirectly = new Set();
  if (direct) {
    for (const r of runsOf(path.join(out, `direct-${v}`))) {
      for (const c of r.checks) (c.status === 'SUCCESS' ? passedDirectly : c.status === 'FAILURE' ? failedDirectly : new Set()).add(`${r.scenario} ${c.id}`);
    }
  }
  const passedHere = new Set();
  let p = 0, f = 0, w = 0;
  const lines = [];
  for (const { scenario, checks } of runs) {
    const sp = checks.filter((c) => c.status === 'SUCCESS');
    for (const c of sp) passedHere.add(`${scenario} ${c.id}`);
    const sf = checks.filter((c) => c.status === 'FAILURE');
    const ours = sf.filter((c) => !failedDirectly.has(`${scenario} ${c.id}`));
    const sw = checks.filter((c) => c.status === 'WARNING');
    // SKIPPED (e.g. tasks-status-notifications, which the suite has not written yet) counts neither way.
    const sk = checks.filter((c) => c.status === 'SKIPPED').length;
    p += sp.length; f += ours.length; w += sw.length;
    const also = sf.length - ours.length;
    lines.push(`  ${ours.length ? 'FAIL' : sf.length || sw.length ? 'warn' : 'ok  '} ${scenario}: ${sp.length} passed, ${ours.length} failed${also ? `, ${also} failing directly too` : ''}${sw.length ? `, ${sw.length} warnings` : ''}${sk ? `, ${sk} skipped by the suite` : ''}`);
    for (const c of [...sf, ...sw]) lines.push(`         ${c.status === 'WARNING' ? 'warning' : ours.includes(c) ? 'failed' : 'failed directly too'} ${c.id}: ${c.errorMessage ?? c.description}`);
  }
  if (direct) {
    const checkedHere = new Set(runs.flatMap((r) => r.checks.map((c) => `${r.scenario} ${c.id}`)));
    const missing = [...passedDirectly].filter((k) => !checkedHere.has(k));
    for (const k of missing) lines.push(`  FAIL ${k}: passed directly, never checked through the gateway`);
    // Neither passed nor failed here (INFO: an optional behaviour the gateway does otherwise, say).
    const status = new Map(runs.flatMap((r) => r.checks.map((c) => [`${r.scenario} ${c.id}`, c.status])));
    for (const k of passedDirectly) if (checkedHere.has(k) && !passedHere.has(k) && status.get(k) !== 'FAILURE') lines.push(`  note ${k}: passed directly, ${status.get(k)} through the gateway`);
    f += missing.length;
    lines.push(`  directly: ${passedDirectly.size} passed; through the gateway: ${[...passedDirectly].filter((k) => passedHere.has(k)).length} of them`);
  }
  // The suite exits 1 on a failed check; anything else non-zero (a crash, a timeout) is a failure too.
  if (exitCode !== 0 && f === 0 && (!direct || exitCode > 1)) { f = 1; lines.push(`  the suite exited with ${exitCode} (see ${path.join(dir, 'suite.log')})`); }
  console.log(`\n${v}: ${p} passed, ${f} failed, ${w} warnings (${runs.length} scenarios)`);
  console.log(lines.join('\n'));
  passed += p; failed += f;
}
if (versions.length === 0) { failed = 1; console.log('no spec version had server scenarios'); }
console.log(`\nconformance: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
EOF
