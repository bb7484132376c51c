// @ts-check
// Memory of idle sessions and idle GET streams: open 10,000 sessions (memory store), then 5,000
// GET streams (one per session), reading the gateway's RSS (/proc/<pid>/status VmRSS) after a
// short settle at each step; then close everything and see how close RSS comes back to the
// baseline. Targets: ≤ 4 KB/session, ≤ 20 KB/stream, within 10 % of the baseline after close.
// With the streams open, one list_changed is sent to all of them (a live reload: lib/fan-out.mjs):
// the time until the last stream heard it (aim: ≤ 1 s).
//
// BENCH_IDLE_SESSIONS (10000), BENCH_IDLE_STREAMS (10000), BENCH_IDLE_SETTLE_MS (settle before a
// reading, 2000), BENCH_IDLE_RETURN_MS (how long to wait for RSS to come back, 15000).
import { request } from 'node:http';
import { ECHO_SERVER, metric, metrics, startGateway } from '../lib/gateway.mjs';
import { PROTOCOL_VERSION, deleteSession, openSession, pooled } from '../lib/mcp.mjs';
import { openFilesLimit, rssKb, settledRss } from '../lib/processes.mjs';
import { fanOutListChanged, listChangedRecorder } from '../lib/fan-out.mjs';

export const name = 'idle-sessions';
export const kind = 'gateway';
/** Memory, not throughput: measured once, in the first round. */
export const once = true;
export const description =
  'RSS per idle session (10k) and per idle GET stream (10k), one list_changed to all streams, RSS after closing';

export const TARGETS = { sessionBytes: 4 * 1024, streamBytes: 20 * 1024, returnPct: 10 };

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** BENCH_IDLE_GC=0 reads RSS without forcing a full GC first. */
const FORCE_GC = process.env.BENCH_IDLE_GC !== '0';

/**
 * Opens a GET stream and resolves once its 200 headers arrived; the stream stays open.
 * @param {URL} url
 * @param {string} sid
 * @param {(chunk: Buffer) => void} [onData]
 * @returns {Promise<import('node:http').ClientRequest>}
 */
function openStream(url, sid, onData = () => undefined) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'GET',
        agent: false, // one socket per stream, never pooled
        headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL_VERSION },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          req.destroy();
          reject(new Error(`GET stream: HTTP ${res.statusCode}`));
          return;
        }
        res.on('data', onData); // keep-alive comments, and events
        res.on('error', () => undefined);
        resolve(req);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  let sessions = Number(process.env.BENCH_IDLE_SESSIONS ?? 10_000);
  let streams = Number(process.env.BENCH_IDLE_STREAMS ?? 10_000);
  const settleMs = Number(process.env.BENCH_IDLE_SETTLE_MS ?? 2000);
  const returnMs = Number(process.env.BENCH_IDLE_RETURN_MS ?? 15_000);
  /** @type {string[]} */
  const notes = [];
  const limit = openFilesLimit();
  // Both this process and the gateway hold one descriptor per stream, plus a few hundred others.
  const headroom = 512;
  if (limit < streams + headroom) {
    const scaled = Math.max(0, limit - headroom);
    notes.push(
      `ulimit -n is ${limit}: GET streams scaled down from ${streams} to ${scaled} (raise it with ulimit -n ${streams + headroom})`,
    );
    ctx.log(notes.at(-1) ?? '');
    streams = scaled;
  }
  streams = Math.min(streams, sessions);

  const gw = await startGateway({
    upstreams: [{ name: 'echo', script: ECHO_SERVER, pool: { min: 1, max: 1, maxInFlight: 64 } }],
    gcOnSignal: FORCE_GC,
    // 10,000 streams and the connections that open their sessions: past the defaults (10,000 each), as an
    // operator serving that many streams would raise them (the gateway caps maxConnections at ulimit -n less a reserve).
    extra: { server: { maxConnections: 15_000 }, limits: { maxStreams: 15_000 } },
  });
  if (FORCE_GC)
    notes.push('a full GC (node --expose-gc, SIGUSR2 → gc() via load/lib/gc-on-signal.cjs) runs before each reading');
  const url = new URL(gw.url);
  /** @type {import('node:http').ClientRequest[]} */
  const open = [];
  try {
    // Warm-up: the code paths compiled and the heap grown to its working size before the baseline.
    const warm = await pooled(1000, 50, () => openSession(gw.url));
    const warmStreams = await pooled(200, 50, (i) => openStream(url, /** @type {string} */ (warm[i])));
    for (const r of warmStreams) r.destroy();
    await pooled(warm.length, 50, (i) => deleteSession(gw.url, /** @type {string} */ (warm[i])));

    /** @type {Array<Record<string, number | undefined>>} */
    const mem = [];
    const heap = async () => {
      const m = await metrics(gw.base, [
        'nodejs_heap_size_used_bytes',
        'nodejs_heap_size_total_bytes',
        'nodejs_external_memory_bytes',
      ]);
      mem.push({
        used: m.nodejs_heap_size_used_bytes,
        total: m.nodejs_heap_size_total_bytes,
        external: m.nodejs_external_memory_bytes,
      });
      return m.nodejs_heap_size_used_bytes;
    };
    const baselineKb = await settledRss(gw.pid, settleMs, FORCE_GC);
    const heap0 = await heap();

    const t0 = Date.now();
    const sids = await pooled(sessions, 50, () => openSession(gw.url));
    const openSessionsMs = Date.now() - t0;
    const afterSessionsKb = await settledRss(gw.pid, settleMs, FORCE_GC);
    const heap1 = await heap();
    const activeSessions = await metric(gw.base, 'mcpgw_sessions_active');

    const t1 = Date.now();
    const recorder = listChangedRecorder(streams);
    open.push(
      ...(await pooled(streams, 100, (i) => openStream(url, /** @type {string} */ (sids[i]), recorder.onData(i)))),
    );
    const openStreamsMs = Date.now() - t1;
    const afterStreamsKb = await settledRss(gw.pid, settleMs, FORCE_GC);
    const heap2 = await heap();
    const streamsOpen = await metric(gw.base, 'mcpgw_sse_streams_open');
    const fanOut = await fanOutListChanged(gw, recorder.heard, streams);

    for (const r of open.splice(0)) r.destroy();
    for (let i = 0; i < 50 && ((await metric(gw.base, 'mcpgw_sse_streams_open')) ?? 0) > 0; i++) await sleep(100);
    const afterStreamsClosedKb = await settledRss(gw.pid, settleMs, FORCE_GC);

    const statuses = await pooled(sids.length, 50, (i) => deleteSession(gw.url, /** @type {string} */ (sids[i])));
    const notDeleted = statuses.filter((s) => s !== 200).length;
    // V8 gives memory back lazily (its memory reducer runs a while after the allocation stops):
    // poll until RSS is within the target or the time is up.
    const t2 = Date.now();
    let afterCloseKb = await settledRss(gw.pid, settleMs, FORCE_GC);
    while (afterCloseKb > baselineKb * (1 + TARGETS.returnPct / 100) && Date.now() - t2 < returnMs) {
      await sleep(500);
      afterCloseKb = rssKb(gw.pid);
    }
    const returnWaitMs = Date.now() - t2;
    const heap3 = await heap();

    const perSessionBytes = ((afterSessionsKb - baselineKb) * 1024) / sessions;
    const perStreamBytes = streams > 0 ? ((afterStreamsKb - afterSessionsKb) * 1024) / streams : NaN;
    const returnPct = ((afterCloseKb - baselineKb) / baselineKb) * 100;
    const perHeap = (
      /** @type {number | undefined} */ a,
      /** @type {number | undefined} */ b,
      /** @type {number} */ n,
    ) => (a !== undefined && b !== undefined && n > 0 ? (b - a) / n : undefined);
    return [
      {
        scenario: name,
        target: 'mcp-gateway',
        variant: 'memory store',
        workload: `${sessions} sessions, ${streams} GET streams`,
        notes: notes.join('; ') || undefined,
        idle: {
          sessions,
          streams,
          activeSessions,
          streamsOpen,
          notDeleted,
          openSessionsMs,
          openStreamsMs,
          baselineKb,
          afterSessionsKb,
          afterStreamsKb,
          afterStreamsClosedKb,
          afterCloseKb,
          returnWaitMs,
          perSessionBytes,
          perStreamBytes,
          returnPct,
          heapUsedBytes: { baseline: heap0, afterSessions: heap1, afterStreams: heap2, afterClose: heap3 },
          // V8 heap used / total (committed) and external memory at the same four points.
          memory: { baseline: mem[0], afterSessions: mem[1], afterStreams: mem[2], afterClose: mem[3] },
          heapPerSessionBytes: perHeap(heap0, heap1, sessions),
          heapPerStreamBytes: perHeap(heap1, heap2, streams),
          fanOut,
          targets: TARGETS,
          pass: {
            session: perSessionBytes <= TARGETS.sessionBytes,
            stream: streams > 0 ? perStreamBytes <= TARGETS.streamBytes : undefined,
            return: returnPct <= TARGETS.returnPct,
          },
        },
      },
    ];
  } finally {
    for (const r of open) r.destroy();
    await gw.stop();
  }
}
