// @ts-check
// Baseline: the echo stdio server driven directly over its stdin/stdout with pipelined
// tools/call requests (about `connections` in flight): the upstream's own ceiling, one process.
import { ECHO_SERVER, ROOT } from '../lib/gateway.mjs';
import { retryWhileBusy, waitForQuiet } from '../lib/load.mjs';
import { CLK_TCK, machineTicks, meter, start } from '../lib/processes.mjs';

export const name = 'upstream-direct';
export const kind = 'baseline';
export const description = "examples/echo/server.mjs over stdio, no HTTP, ~50 calls in flight: one worker's ceiling";

/** @param {number[]} sorted @param {number} q */
function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1)] ?? 0;
}

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const depth = ctx.connections;
  const { proc } = await start({
    name: 'echo-direct',
    command: process.execPath,
    args: [ECHO_SERVER],
    cwd: ROOT,
    ready: /\] ready/,
    stdin: true,
    rawStdout: true,
  });
  const { child } = proc;
  const stdin = /** @type {import('node:stream').Writable} */ (child.stdin);
  const stdout = /** @type {import('node:stream').Readable} */ (child.stdout);
  stdout.setEncoding('utf8');

  /** @type {Map<number, bigint>} */
  const sent = new Map();
  /** @type {Map<number, (msg: any) => void>} */
  const waiters = new Map();
  let nextId = 1;
  let recording = false;
  let sending = false;
  /** @type {number[]} */
  let latencies = [];
  let completed = 0;
  let bad = 0;
  let rpcErrors = 0;
  /** @type {string[]} */
  let outbox = [];
  let flushScheduled = false;

  const flush = () => {
    flushScheduled = false;
    if (outbox.length === 0) return;
    stdin.write(outbox.join(''));
    outbox = [];
  };
  /** @param {object} msg */
  const write = (msg) => {
    outbox.push(`${JSON.stringify(msg)}\n`);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush); // one write per event-loop turn, like the gateway
    }
  };
  const topUp = () => {
    while (sending && sent.size < depth) {
      const id = nextId++;
      sent.set(id, process.hrtime.bigint());
      write({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello' } } });
    }
  };

  let buffer = '';
  stdout.on('data', (/** @type {string} */ chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.trim()) continue;
      const msg = JSON.parse(line);
      const w = waiters.get(msg.id);
      if (w) {
        waiters.delete(msg.id);
        w(msg);
        continue;
      }
      const t0 = sent.get(msg.id);
      if (t0 === undefined) continue;
      sent.delete(msg.id);
      if (recording) {
        completed++;
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (msg.error) {
          rpcErrors++;
          bad++;
        } else if (msg.result?.content?.[0]?.text !== 'hello') bad++;
      }
    }
    topUp();
  });

  /** @param {number} id @param {string} method @param {object} params */
  const request = (id, method, params) =>
    new Promise((resolve) => {
      waiters.set(id, resolve);
      write({ jsonrpc: '2.0', id, method, params });
    });

  try {
    await request(0, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'bench', version: '1' },
    });
    write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const once = async () => {
      // The machine must be quiet before the load starts (our own load would count as busy).
      while (sent.size > 0) await new Promise((r) => setTimeout(r, 10));
      const quietWaitS = await waitForQuiet();
      sending = true;
      topUp();
      await new Promise((r) => setTimeout(r, ctx.warmup * 1000));
      const m = meter(() => [proc.pid]);
      const cpu0 = process.cpuUsage();
      const m0 = machineTicks();
      const t0 = process.hrtime.bigint();
      latencies = [];
      completed = 0;
      bad = 0;
      rpcErrors = 0;
      recording = true;
      await new Promise((r) => setTimeout(r, ctx.duration * 1000));
      recording = false;
      sending = false;
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu = process.cpuUsage(cpu0);
      const m1 = machineTicks();
      const server = m.stop();
      const loadgenCpuPct = ((cpu.user + cpu.system) / 1e6 / seconds) * 100;
      const machineCpuPct = ((m1.busy - m0.busy) / CLK_TCK / seconds) * 100;
      latencies.sort((a, b) => a - b);
      const mean = latencies.reduce((s, v) => s + v, 0) / Math.max(1, latencies.length);
      return {
        scenario: name,
        target: 'echo stdio',
        variant: `1 process, ${depth} in flight`,
        workload: 'tools/call (stdio)',
        reqPerSec: completed / seconds,
        completed,
        seconds,
        latencyMs: {
          p50: percentile(latencies, 50),
          p90: percentile(latencies, 90),
          p99: percentile(latencies, 99),
          mean,
          max: latencies.at(-1) ?? 0,
        },
        errors: 0,
        timeouts: 0,
        non2xx: 0,
        bad,
        rpcErrors,
        procs: { upstream: server },
        loadgenCpuPct,
        machineCpuPct,
        otherCpuPct: Math.max(0, machineCpuPct - loadgenCpuPct - server.cpuPct),
        quietWaitS,
        extra: { note: 'calls/s over the whole run (no per-second samples); latency measured in the driver' },
      };
    };
    return [await retryWhileBusy(once)];
  } finally {
    sending = false;
    stdin.end();
    await proc.stop(2000);
  }
}
