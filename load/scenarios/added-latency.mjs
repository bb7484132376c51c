// @ts-check
// What the gateway adds to one call at low load (issue 34, item 2): c=1, one call after another,
// each timed in this process with hrtime (autocannon's latencies are whole milliseconds, too
// coarse here). Per hop, the same echo call sent to the upstream directly and through the
// gateway, side by side: stdio (examples/echo/server.mjs driven over its pipes, against the
// gateway's 2025 session and 2026-07-28 stateless paths to it) and Streamable HTTP
// (baselines/echo-http-fast.mjs over one keep-alive connection, against the gateway in front of
// it). The report gives p50 and p99 of each and the difference (aim: ≤ 100 µs p50 on stdio).
// Beside them, the relay floor of each hop at c=1 (baselines/relay-floor-server.mjs: bare Fastify
// plus the hop and nothing else): what any relay in Node adds, so the gateway's own part is the
// gateway row minus the floor row.
import { Client } from 'undici';
import { startBaselineServer } from '../lib/baseline.mjs';
import { ECHO_SERVER, ROOT, startGateway, startHttpEcho } from '../lib/gateway.mjs';
import { retryWhileBusy, waitForQuiet } from '../lib/load.mjs';
import {
  openSession,
  POST_HEADERS,
  sessionHeaders,
  statelessCallHeaders,
  statelessToolsCallBody,
  toolsCallBody,
} from '../lib/mcp.mjs';
import { CLK_TCK, machineTicks, meter, start } from '../lib/processes.mjs';

export const name = 'added-latency';
export const kind = 'gateway';
export const description =
  'c=1: an echo call to the upstream directly and through the gateway (stdio: session and stateless; HTTP), p50/p99 in µs';

/** @param {number[]} sorted @param {number} q */
function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1)] ?? 0;
}

/** One call, resolved with whether its reply was the echo. @typedef {() => Promise<boolean>} Call */

/**
 * Calls one after another for the warm-up, then for ctx.duration seconds timing each: a bench row.
 * @param {import('../run.mjs').Context} ctx @param {Call} call
 * @param {{ target: string, variant: string, workload: string, pids: () => number[], path: string }} o
 */
async function sequential(ctx, call, o) {
  const once = async () => {
    const quietWaitS = await waitForQuiet();
    const warmUntil = Date.now() + ctx.warmup * 1000;
    while (Date.now() < warmUntil) await call();
    const m = meter(o.pids);
    const cpu0 = process.cpuUsage();
    const m0 = machineTicks();
    /** @type {number[]} */
    const latencies = [];
    let bad = 0;
    const t0 = process.hrtime.bigint();
    const end = t0 + BigInt(ctx.duration * 1e9);
    for (let now = t0; now < end;) {
      const ok = await call();
      const after = process.hrtime.bigint();
      latencies.push(Number(after - now) / 1e6);
      if (!ok) bad++;
      now = after;
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    const m1 = machineTicks();
    const procs = m.stop();
    const loadgenCpuPct = ((cpu.user + cpu.system) / 1e6 / seconds) * 100;
    const machineCpuPct = ((m1.busy - m0.busy) / CLK_TCK / seconds) * 100;
    latencies.sort((a, b) => a - b);
    const mean = latencies.reduce((s, v) => s + v, 0) / Math.max(1, latencies.length);
    return {
      scenario: name,
      target: o.target,
      variant: o.variant,
      workload: o.workload,
      reqPerSec: latencies.length / seconds,
      completed: latencies.length,
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
      rpcErrors: 0,
      // The process under test: the gateway, the relay floor (as the baselines: "server"), or the upstream.
      procs: {
        [o.target === 'mcp-gateway' ? 'gateway' : o.target === 'fastify + one hop' ? 'server' : 'upstream']: procs,
      },
      loadgenCpuPct,
      machineCpuPct,
      otherCpuPct: Math.max(0, machineCpuPct - loadgenCpuPct - procs.cpuPct),
      quietWaitS,
      extra: { path: o.path, note: 'c=1; calls/s over the run; latency timed in the driver (hrtime)' },
    };
  };
  return retryWhileBusy(once);
}

/** @param {string} text */
const isEcho = (text) => text.includes('"text":"hello"') && !text.includes('"error"');

/**
 * POSTs over one keep-alive connection (undici, as an agent's HTTP client would keep it).
 * @param {string} url @param {() => Record<string, string>} headers @param {(id: number) => string} body
 * @returns {{ call: Call, close: () => Promise<void> }}
 */
function httpCaller(url, headers, body) {
  const u = new URL(url);
  const client = new Client(u.origin, { pipelining: 1 });
  let id = 1;
  return {
    call: async () => {
      const res = await client.request({ path: u.pathname, method: 'POST', headers: headers(), body: body(id++) });
      const text = await res.body.text();
      return res.statusCode === 200 && isEcho(text);
    },
    close: () => client.close(),
  };
}

/** The echo stdio server driven over its pipes, one call at a time. */
async function stdioCaller() {
  const { proc } = await start({
    name: 'echo-direct',
    command: process.execPath,
    args: [ECHO_SERVER],
    cwd: ROOT,
    ready: /\] ready/,
    stdin: true,
    rawStdout: true,
  });
  const stdin = /** @type {import('node:stream').Writable} */ (proc.child.stdin);
  const stdout = /** @type {import('node:stream').Readable} */ (proc.child.stdout);
  stdout.setEncoding('utf8');
  /** @type {((line: string) => void) | undefined} */
  let waiter;
  let buffer = '';
  stdout.on('data', (/** @type {string} */ chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) waiter?.(line);
    }
  });
  let id = 0;
  /** @param {string} method @param {object} [params] */
  const send = (method, params) =>
    new Promise((/** @type {(line: string) => void} */ resolve) => {
      waiter = resolve;
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: id++, method, params })}\n`);
    });
  await send('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bench', version: '1' },
  });
  stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return {
    pid: proc.pid,
    /** @type {Call} */
    call: async () => isEcho(await send('tools/call', { name: 'echo', arguments: { text: 'hello' } })),
    close: async () => {
      stdin.end();
      await proc.stop(2000);
    },
  };
}

/**
 * The relay floor of one hop (`hop`: relay-floor-server.mjs's arguments) at c=1.
 * @param {import('../run.mjs').Context} ctx @param {string[]} hop @param {'stdio' | 'http'} path
 * @param {Record<string, unknown>} args
 */
async function floorRow(ctx, hop, path, args) {
  const { proc, url } = await startBaselineServer('relay-floor', 'relay-floor-server.mjs', hop);
  const relay = httpCaller(
    url,
    () => POST_HEADERS,
    (id) => toolsCallBody(id, 'echo', args),
  );
  try {
    return await sequential(ctx, relay.call, {
      target: 'fastify + one hop',
      variant: `relay floor (${path === 'stdio' ? 'stdio' : 'HTTP upstream'})`,
      workload: `tools/call echo, c=1 (${path === 'stdio' ? 'stdio' : 'HTTP'} upstream)`,
      path,
      pids: () => [proc.pid],
    });
  } finally {
    await relay.close();
    await proc.stop();
  }
}

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const args = { text: 'hello' };
  const rows = [];
  const direct = await stdioCaller();
  try {
    rows.push(
      await sequential(ctx, direct.call, {
        ...{ target: 'echo stdio', variant: 'direct', workload: 'tools/call echo, c=1 (stdio)', path: 'stdio' },
        pids: () => [direct.pid],
      }),
    );
  } finally {
    await direct.close();
  }
  rows.push(await floorRow(ctx, ['stdio', ECHO_SERVER], 'stdio', args));
  const gw = await startGateway({ upstreams: [{ name: 'echo', script: ECHO_SERVER }] });
  try {
    const sid = await openSession(gw.url);
    const session = httpCaller(
      gw.url,
      () => sessionHeaders(sid),
      (id) => toolsCallBody(id, 'echo__echo', args),
    );
    const stateless = httpCaller(
      gw.url,
      () => statelessCallHeaders('echo__echo'),
      (id) => statelessToolsCallBody(id, 'echo__echo', args),
    );
    const pids = () => gw.gatewayPids();
    try {
      const o = { target: 'mcp-gateway', workload: 'tools/call echo, c=1 (stdio upstream)', path: 'stdio', pids };
      rows.push(await sequential(ctx, session.call, { ...o, variant: 'stdio upstream, 2025 session' }));
      rows.push(await sequential(ctx, stateless.call, { ...o, variant: 'stdio upstream, 2026-07-28 stateless' }));
    } finally {
      await Promise.all([session.close(), stateless.close()]);
    }
  } finally {
    await gw.stop();
  }
  const { proc: upstream, url } = await startHttpEcho();
  try {
    const sid = await openSession(url);
    const http = httpCaller(
      url,
      () => ({ ...POST_HEADERS, 'mcp-session-id': sid }),
      (id) => toolsCallBody(id, 'echo', args),
    );
    try {
      rows.push(
        await sequential(ctx, http.call, {
          ...{ target: 'echo-http-fast', variant: 'direct', workload: 'tools/call echo, c=1 (HTTP)', path: 'http' },
          pids: () => [upstream.pid],
        }),
      );
    } finally {
      await http.close();
    }
    rows.push(await floorRow(ctx, ['http', url], 'http', args));
    const gwHttp = await startGateway({ upstreams: [{ name: 'echo', url }] });
    try {
      const gsid = await openSession(gwHttp.url);
      const viaGateway = httpCaller(
        gwHttp.url,
        () => sessionHeaders(gsid),
        (id) => toolsCallBody(id, 'echo__echo', args),
      );
      try {
        rows.push(
          await sequential(ctx, viaGateway.call, {
            ...{ target: 'mcp-gateway', variant: 'HTTP upstream, 2025 session', path: 'http' },
            workload: 'tools/call echo, c=1 (HTTP upstream)',
            pids: () => gwHttp.gatewayPids(),
          }),
        );
      } finally {
        await viaGateway.close();
      }
    } finally {
      await gwHttp.stop();
    }
  } finally {
    await upstream.stop();
  }
  return rows;
}
