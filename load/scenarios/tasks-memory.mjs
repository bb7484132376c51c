// @ts-check
// Memory of tasks: 1,000 task-augmented tools/call of slow_compute sent at once (2026-07-28
// stateless requests declaring the io.modelcontextprotocol/tasks extension), each answered at
// once with a CreateTaskResult while the call runs on the upstream (examples/tasks/server.mjs,
// which knows nothing of tasks). Reads the gateway's RSS (/proc/<pid>/status VmRSS, after a full
// GC) before and with the 1,000 running, and per task; checks every call was accepted as a task
// and that a sample of them reads `working` on tasks/get; then cancels them all and reads RSS
// again. Bounded: the calls run BENCH_TASKS_SECONDS (120) unless cancelled, creation must be done
// within BENCH_TASKS_CREATE_MS (60000), the cancels within the same again.
//
// BENCH_TASKS (1000), BENCH_TASKS_CONCURRENCY (all at once, scaled down to `ulimit -n`),
// BENCH_TASKS_SECONDS (120), BENCH_TASKS_SETTLE_MS (2000), BENCH_IDLE_GC (1: GC before reading).
import { setMaxListeners } from 'node:events';
import { Agent, request } from 'node:http';
import { TASKS_SERVER, metrics, startGateway } from '../lib/gateway.mjs';
import { POST_HEADERS, STATELESS_VERSION, pooled } from '../lib/mcp.mjs';
import { descendants, openFilesLimit, rssKb, settledRss } from '../lib/processes.mjs';

export const name = 'tasks-memory';
export const kind = 'gateway';
/** Memory, not throughput: measured once, in the first round. */
export const once = true;
export const description = 'RSS with 1,000 tasks running at once (task-augmented slow_compute), per task; all accepted';

/** Per running task, gateway RSS (smoke on the tasks branch: 2.8 KB RSS, 6.2 KB V8 heap). */
export const TARGETS = { taskBytes: 16 * 1024 };

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const TOOL = 'tasks__slow_compute';

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const FORCE_GC = process.env.BENCH_IDLE_GC !== '0';

/** @param {string} key @param {number} fallback */
function envInt(key, fallback) {
  const n = Number(process.env[key] ?? fallback);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/**
 * One 2026-07-28 stateless request declaring the tasks extension; resolves with the HTTP
 * status and the parsed JSON-RPC message (JSON or the SSE event carrying the reply).
 * @param {URL} url
 * @param {Agent} agent
 * @param {number} id
 * @param {string} method
 * @param {Record<string, unknown>} params
 * @param {string | undefined} mcpName
 * @param {AbortSignal} signal
 * @returns {Promise<{ status: number, message: any }>}
 */
function rpc(url, agent, id, method, params, mcpName, signal) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': STATELESS_VERSION,
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-gateway-bench', version: '1' },
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } });
  /** @type {Record<string, string>} */
  const headers = {
    ...POST_HEADERS,
    'mcp-protocol-version': STATELESS_VERSION,
    'mcp-method': method,
    'content-length': String(Buffer.byteLength(body)),
  };
  if (mcpName !== undefined) headers['mcp-name'] = mcpName;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent, signal },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('error', reject);
        res.on('end', () => {
          let message;
          try {
            if (String(res.headers['content-type']).includes('text/event-stream')) {
              const data = text
                .split(/\r?\n/)
                .filter((l) => l.startsWith('data:'))
                .map((l) => JSON.parse(l.slice(5)))
                .find((m) => m && m.id === id);
              message = data;
            } else message = JSON.parse(text);
          } catch {
            message = undefined;
          }
          resolve({ status: res.statusCode ?? 0, message });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Creates `n` tasks with at most `concurrency` requests in flight; returns their ids (undefined
 * where the call was not accepted as a task) and what the others got.
 * @param {URL} url
 * @param {Agent} agent
 * @param {number} n
 * @param {number} concurrency
 * @param {number} seconds
 * @param {AbortSignal} signal
 */
async function createTasks(url, agent, n, concurrency, seconds, signal) {
  /** @type {Map<string, number>} */
  const rejected = new Map();
  const ids = await pooled(n, concurrency, async (i) => {
    try {
      const { status, message } = await rpc(
        url,
        agent,
        i + 1,
        'tools/call',
        { name: TOOL, arguments: { seconds, label: `t${i}` } },
        TOOL,
        signal,
      );
      const r = message?.result;
      if (status === 200 && r?.resultType === 'task' && typeof r.taskId === 'string')
        return /** @type {string} */ (r.taskId);
      const why = message?.error ? `error ${message.error.code}` : r ? `resultType ${r.resultType}` : `HTTP ${status}`;
      rejected.set(why, (rejected.get(why) ?? 0) + 1);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      rejected.set(why, (rejected.get(why) ?? 0) + 1);
    }
    return undefined;
  });
  return { ids, rejected: Object.fromEntries(rejected) };
}

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const n = envInt('BENCH_TASKS', 1000);
  const seconds = envInt('BENCH_TASKS_SECONDS', 120);
  const settleMs = envInt('BENCH_TASKS_SETTLE_MS', 2000);
  const createMs = envInt('BENCH_TASKS_CREATE_MS', 60_000);
  /** @type {string[]} */
  const notes = [];
  let concurrency = envInt('BENCH_TASKS_CONCURRENCY', n);
  // This process and the gateway each hold a descriptor per request in flight, plus a few hundred.
  const limit = openFilesLimit();
  if (limit < concurrency + 512) {
    concurrency = Math.max(50, limit - 512);
    notes.push(`ulimit -n is ${limit}: at most ${concurrency} creations in flight`);
    ctx.log(notes.at(-1) ?? '');
  }

  const gw = await startGateway({
    // One worker takes every call: the memory is the gateway's per task, not extra processes.
    upstreams: [
      {
        name: 'tasks',
        script: TASKS_SERVER,
        pool: { min: 1, max: 1, maxInFlight: n + 200 },
        tasks: { tools: ['slow_compute'] },
      },
    ],
    extra: { tasks: { maxPerPrincipal: n * 2 + 1000, defaultTtlMs: 600_000 } },
    gcOnSignal: FORCE_GC,
  });
  if (FORCE_GC) notes.push('a full GC (SIGUSR2 → gc()) runs before each reading');
  const url = new URL(gw.url);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const abort = new AbortController();
  // Every request in flight listens on it: 1,000 at once.
  setMaxListeners(0, abort.signal);
  const deadline = setTimeout(() => abort.abort(new Error('tasks-memory: out of time')), createMs * 3);
  deadline.unref();
  try {
    // Warm-up: the task code paths compiled and the heap grown; these end at once (seconds: 0
    // may answer without a task; 1 s is a task either way) and stay until their ttl.
    const warm = await createTasks(url, agent, 100, 50, 1, abort.signal);
    await sleep(1500);

    const heapNames = ['nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes'];
    const baselineKb = await settledRss(gw.pid, settleMs, FORCE_GC);
    const heap0 = await metrics(gw.base, heapNames);
    const upstreamBaselineKb = descendants(gw.pid).reduce((kb, pid) => kb + rssKb(pid), 0);

    const t0 = Date.now();
    const createTimer = setTimeout(
      () => abort.abort(new Error(`creating ${n} tasks took over ${createMs} ms`)),
      createMs,
    );
    const created = await createTasks(url, agent, n, concurrency, seconds, abort.signal);
    clearTimeout(createTimer);
    const createTookMs = Date.now() - t0;
    if (abort.signal.aborted)
      throw new Error(`creating ${n} tasks took over ${createMs} ms (${created.ids.filter(Boolean).length} accepted)`);
    const ids = created.ids.filter((id) => id !== undefined);
    const accepted = ids.length;
    const withTasksKb = await settledRss(gw.pid, settleMs, FORCE_GC);
    const heap1 = await metrics(gw.base, heapNames);
    const upstreamWithTasksKb = descendants(gw.pid).reduce((kb, pid) => kb + rssKb(pid), 0);

    // A sample must still be running (seconds is far longer than the measurement).
    const sample = ids.filter((_, i) => i % Math.max(1, Math.floor(ids.length / 20)) === 0);
    /** @type {Record<string, number>} */
    const sampleStatus = {};
    for (const id of sample) {
      const { message } = await rpc(url, agent, 0, 'tasks/get', { taskId: id }, id, abort.signal);
      const s = message?.result?.status ?? (message?.error ? `error ${message.error.code}` : 'no reply');
      sampleStatus[s] = (sampleStatus[s] ?? 0) + 1;
    }

    // Cancel them all; then the calls end on the upstream and the records stay until the ttl.
    const t1 = Date.now();
    const cancels = await pooled(ids.length, Math.min(concurrency, 200), async (i) => {
      const id = /** @type {string} */ (ids[i]);
      const { message } = await rpc(url, agent, i + 1, 'tasks/cancel', { taskId: id }, id, abort.signal).catch(() => ({
        message: undefined,
      }));
      return message?.result?.resultType === 'complete';
    });
    const cancelTookMs = Date.now() - t1;
    const cancelAcked = cancels.filter(Boolean).length;
    const afterCancelKb = await settledRss(gw.pid, settleMs, FORCE_GC);

    const perTaskBytes = accepted > 0 ? ((withTasksKb - baselineKb) * 1024) / accepted : NaN;
    const used = (/** @type {Record<string, number | undefined>} */ m) => m.nodejs_heap_size_used_bytes;
    const heapPerTaskBytes =
      accepted > 0 && used(heap0) !== undefined && used(heap1) !== undefined
        ? /** @type {number} */ (used(heap1) - /** @type {number} */ (used(heap0))) / accepted
        : undefined;
    return [
      {
        scenario: name,
        target: 'mcp-gateway',
        variant: 'memory store, 1 stdio worker',
        workload: `${n} task-augmented slow_compute {seconds: ${seconds}} at once (c=${concurrency}), 2026-07-28 stateless`,
        notes: notes.join('; ') || undefined,
        tasks: {
          requested: n,
          accepted,
          rejected: created.rejected,
          warmAccepted: warm.ids.filter(Boolean).length,
          concurrency,
          createTookMs,
          sampleStatus,
          cancelAcked,
          cancelTookMs,
          baselineKb,
          withTasksKb,
          afterCancelKb,
          perTaskBytes,
          heapUsedBytes: { baseline: used(heap0), withTasks: used(heap1) },
          heapPerTaskBytes,
          upstreamRssKb: { baseline: upstreamBaselineKb, withTasks: upstreamWithTasksKb },
          targets: TARGETS,
          pass: {
            allAccepted: accepted === n,
            stillWorking: (sampleStatus.working ?? 0) === sample.length,
            perTask: perTaskBytes <= TARGETS.taskBytes,
          },
        },
      },
    ];
  } finally {
    clearTimeout(deadline);
    abort.abort();
    agent.destroy();
    await gw.stop();
  }
}
