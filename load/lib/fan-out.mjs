// @ts-check
// One list_changed to every open GET stream (issue 34, item 6): the gateway's config is rewritten
// with a tool of the echo upstream denied and the gateway gets SIGHUP (a live reload, as an operator
// would do it); each stream's first `notifications/tools/list_changed` is timed from the signal.
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export const FAN_OUT_AIM_MS = 1000;

/**
 * A per-stream recorder: `onData(i)` is the data handler of stream i; `heard[i]` the hrtime it
 * first saw a tools list_changed (a chunk boundary inside the method name is not expected: events are small).
 * @param {number} n
 */
export function listChangedRecorder(n) {
  /** @type {(bigint | undefined)[]} */
  const heard = new Array(n);
  return {
    heard,
    /** @param {number} i */
    onData: (i) => (/** @type {Buffer} */ chunk) => {
      if (heard[i] === undefined && chunk.includes('notifications/tools/list_changed'))
        heard[i] = process.hrtime.bigint();
    },
  };
}

/**
 * Reloads the gateway with `add` denied and waits (up to `timeoutMs`) until every stream heard it.
 * @param {{ pid: number, config: any, configFile: string }} gw
 * @param {(bigint | undefined)[]} heard
 * @param {number} streams
 */
export async function fanOutListChanged(gw, heard, streams, timeoutMs = 15_000) {
  const next = structuredClone(gw.config);
  next.upstreams[0].tools = { deny: ['add'] };
  writeFileSync(gw.configFile, stringify(next));
  const t0 = process.hrtime.bigint();
  process.kill(gw.pid, 'SIGHUP');
  const deadline = Date.now() + timeoutMs;
  const count = () => heard.reduce((n, t) => (t === undefined ? n : n + 1), 0);
  while (count() < streams && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const ms = heard
    .filter((t) => t !== undefined)
    .map((t) => Number(/** @type {bigint} */ (t) - t0) / 1e6)
    .sort((a, b) => a - b);
  const at = (/** @type {number} */ q) => ms[Math.min(ms.length - 1, Math.ceil(q * ms.length) - 1)];
  const last = ms.at(-1);
  return {
    streams,
    heard: ms.length,
    firstMs: ms[0],
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    lastMs: last,
    aimMs: FAN_OUT_AIM_MS,
    pass: ms.length === streams && last !== undefined && last <= FAN_OUT_AIM_MS,
  };
}
