// @ts-check
// Load over the connection transports (WebSocket, legacy HTTP+SSE), which autocannon cannot
// drive: `connections` clients, one session each, each in a closed loop of one tools/call at a
// time (as autocannon's connections without pipelining). Metered like load.mjs's measurements,
// so the report compares them with the Streamable HTTP rows.
import WebSocket from 'ws';
import { CLK_TCK, machineTicks, meter } from './processes.mjs';
import { counters, retryWhileBusy, waitForQuiet } from './load.mjs';
import { PROTOCOL_VERSION, toolsCallBody, verifyEchoReply } from './mcp.mjs';

/**
 * @typedef {object} Channel  one client session over a connection transport
 * @property {(id: number, body: string) => Promise<any>} call  sends `body` (a request with `id`), resolves with its response
 * @property {() => Promise<void>} close
 */

const INITIALIZE = (/** @type {number} */ id) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

/** Responses by id, for a channel that reads them from one stream. */
function pendingTable() {
  /** @type {Map<number, (m: any) => void>} */
  const waiting = new Map();
  return {
    /** @param {number} id */
    wait: (id) => new Promise((resolve) => waiting.set(id, resolve)),
    /** @param {any} m */
    settle: (m) => {
      const r = waiting.get(m.id);
      if (r) {
        waiting.delete(m.id);
        r(m);
      }
    },
  };
}

/** @param {string} base  http://host:port @returns {Promise<Channel>} */
export async function openWebSocket(base) {
  const url = new URL('/ws', base);
  url.protocol = 'ws:';
  const ws = new WebSocket(url, 'mcp');
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const table = pendingTable();
  ws.on('message', (data) => table.settle(JSON.parse(String(data))));
  /** @type {Channel} */
  const channel = {
    call: (id, body) => {
      const answer = table.wait(id);
      ws.send(body);
      return answer;
    },
    close: async () => ws.close(),
  };
  await channel.call(0, INITIALIZE(0));
  ws.send(INITIALIZED);
  return channel;
}

/** @param {string} base @returns {Promise<Channel>} */
export async function openLegacySse(base) {
  const controller = new AbortController();
  const res = await fetch(new URL('/sse', base), {
    headers: { accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (res.status !== 200 || !res.body) throw new Error(`GET /sse: ${res.status}`);
  const table = pendingTable();
  /** @type {(url: URL) => void} */
  let gotEndpoint = () => undefined;
  const endpoint = new Promise((resolve) => (gotEndpoint = resolve));
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of /** @type {AsyncIterable<Uint8Array>} */ (res.body)) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === 'endpoint' && data) gotEndpoint(new URL(data, base));
          else if (event === 'message' && data) table.settle(JSON.parse(data));
        }
      }
    } catch {
      /* aborted on close */
    }
  })();
  const target = /** @type {URL} */ (await endpoint);
  /** @param {string} body */
  const post = async (body) => {
    const r = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await r.arrayBuffer();
    if (r.status !== 202) throw new Error(`POST ${target.pathname}: ${r.status}`);
  };
  /** @type {Channel} */
  const channel = {
    call: async (id, body) => {
      const answer = table.wait(id);
      await post(body);
      return answer;
    },
    close: async () => controller.abort(),
  };
  await channel.call(0, INITIALIZE(0));
  await post(INITIALIZED);
  return channel;
}

/** @param {number[]} sorted @param {number} q */
const quantile = (sorted, q) =>
  sorted.length === 0 ? 0 : /** @type {number} */ (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);

/**
 * tools/call `tool` with `args` over `channels`, each in a closed loop, for `seconds`.
 * @param {Channel[]} channels @param {number} seconds @param {string} tool @param {Record<string, unknown>} args @param {string} expectText
 */
async function runLoops(channels, seconds, tool, args, expectText) {
  const c = counters();
  /** @type {number[]} */
  const latencies = [];
  const deadline = Date.now() + seconds * 1000;
  let nextId = 1;
  let errors = 0;
  await Promise.all(
    channels.map(async (ch) => {
      while (Date.now() < deadline) {
        const id = nextId++;
        const t0 = performance.now();
        try {
          const reply = await ch.call(id, toolsCallBody(id, tool, args));
          latencies.push(performance.now() - t0);
          c.checked++;
          if (reply.error) {
            c.rpcErrors++;
            c.bad++;
          } else if (c.checked % 50 === 0 && !verifyEchoReply(JSON.stringify(reply), expectText)) c.bad++;
        } catch {
          errors++;
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((s, x) => s + x, 0) / Math.max(1, latencies.length);
  return { counters: c, errors, latencies, mean };
}

/**
 * @param {object} o
 * @param {(base: string) => Promise<Channel>} o.open
 * @param {string} o.base
 * @param {number} o.connections
 * @param {number} o.duration
 * @param {number} o.warmup
 * @param {string} o.tool
 * @param {Record<string, unknown>} o.args
 * @param {string} o.expectText
 * @param {Record<string, () => number[]>} [o.meters]
 * @returns {Promise<import('./load.mjs').Measurement>}
 */
export function measureConnections(o) {
  return retryWhileBusy(async () => {
    const quietWaitS = await waitForQuiet();
    const channels = await Promise.all(Array.from({ length: o.connections }, () => o.open(o.base)));
    try {
      if (o.warmup > 0) await runLoops(channels, o.warmup, o.tool, o.args, o.expectText);
      const running = Object.fromEntries(Object.entries(o.meters ?? {}).map(([name, pids]) => [name, meter(pids)]));
      const cpu0 = process.cpuUsage();
      const m0 = machineTicks();
      const start = Date.now();
      const r = await runLoops(channels, o.duration, o.tool, o.args, o.expectText);
      const end = Date.now();
      const wall = (end - start) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const m1 = machineTicks();
      const procs = Object.fromEntries(Object.entries(running).map(([name, m]) => [name, m.stop()]));
      const loadgenCpuPct = ((cpu.user + cpu.system) / 1e6 / wall) * 100;
      const machineCpuPct = ((m1.busy - m0.busy) / CLK_TCK / wall) * 100;
      const ours = loadgenCpuPct + Object.values(procs).reduce((s, p) => s + p.cpuPct, 0);
      const round = (/** @type {number} */ x) => Math.round(x * 100) / 100;
      return {
        reqPerSec: r.latencies.length / wall,
        completed: r.latencies.length,
        seconds: wall,
        latencyMs: {
          p50: round(quantile(r.latencies, 0.5)),
          p90: round(quantile(r.latencies, 0.9)),
          p99: round(quantile(r.latencies, 0.99)),
          mean: round(r.mean),
          max: round(r.latencies.at(-1) ?? 0),
        },
        errors: r.errors,
        timeouts: 0,
        non2xx: 0,
        bad: r.counters.bad,
        rpcErrors: r.counters.rpcErrors,
        procs,
        loadgenCpuPct,
        machineCpuPct,
        otherCpuPct: Math.max(0, machineCpuPct - ours),
        quietWaitS,
        window: { start, end },
        extra: { checked: r.counters.checked },
      };
    } finally {
      await Promise.all(channels.map((ch) => ch.close()));
    }
  });
}
