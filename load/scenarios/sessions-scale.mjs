// @ts-check
// Many sessions open (issue 34, item 4): call-json's load (c=50 over 50 of them) while 10, 1,000,
// 10,000 and 100,000 sessions are open (BENCH_SESSION_STEPS), on the memory store and on Redis:
// the gateway's CPU per call should stay flat (within 10 %); Redis memory per session
// (used_memory over the sessions opened). One gateway per step, all running at once (on Redis,
// each with a Redis of its own), measured in BENCH_SESSION_ROUNDS (3) interleaved rounds, each
// round in another order: a step's ratio to the first step is taken within each round, then its
// median. Measured one after another, minutes apart, the steps' rows differed by as much as the
// load of the machine did (steal time on a shared VM), which no step count could tell apart from
// the sessions' cost. Opening 100,000 sessions takes a minute or two.
import { ECHO_SERVER, startGateway } from '../lib/gateway.mjs';
import { openSessions } from '../lib/mcp.mjs';
import { startRedisServer } from '../lib/processes.mjs';
import { measureEcho } from '../lib/workloads.mjs';

export const name = 'sessions-scale';
export const kind = 'gateway';
export const description =
  'call-json with 10 to 100,000 sessions open, memory store and Redis: CPU per call, Redis bytes per session';
/** The steps' gateways live through their interleaved rounds: measured once. */
export const once = true;

const STEPS = (process.env.BENCH_SESSION_STEPS ?? '10,1000,10000,100000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_SESSION_ROUNDS ?? 3);

/** @param {string} redisUrl */
async function redisUsedMemory(redisUrl) {
  const { Redis } = await import('ioredis');
  const r = new Redis(redisUrl, { lazyConnect: true });
  try {
    await r.connect();
    const info = await r.info('memory');
    return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
  } finally {
    r.disconnect();
  }
}

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** @param {import('../lib/load.mjs').Measurement} m */
const cpuUsPerCall = (m) => (m.reqPerSec > 0 ? ((m.procs.gateway.cpuPct / 100) * 1e6) / m.reqPerSec : NaN);

/**
 * One store's steps: a gateway per step (and a Redis per step, for the Redis store), the sessions
 * opened in each, then the rounds. A step's row is its median round, with every round's CPU per
 * call and its ratio to the first step in the same round.
 * @param {import('../run.mjs').Context} ctx @param {string} store
 * @param {(step: number) => Promise<{ sessions: Record<string, unknown>, pids: () => number[], redisUrl?: string, stop: () => Promise<void> }>} backing
 */
async function steps(ctx, store, backing) {
  /** @type {Array<{ step: number, gw: Awaited<ReturnType<typeof startGateway>>, back: Awaited<ReturnType<typeof backing>>, sids: string[], openMs: number, redisBytesPerSession?: number, runs: any[] }>} */
  const gateways = [];
  try {
    for (const step of STEPS) {
      const back = await backing(step);
      const gw = await startGateway({
        upstreams: [{ name: 'echo', script: ECHO_SERVER, pool: { min: 1, max: 1, maxInFlight: 64 } }],
        sessions: back.sessions,
        extra: { limits: { maxSessions: step + 1000 } },
      }).catch(async (err) => {
        await back.stop();
        throw err;
      });
      const entry = { step, gw, back, sids: /** @type {string[]} */ ([]), openMs: 0, runs: [] };
      gateways.push(entry);
      const memoryBefore = back.redisUrl ? await redisUsedMemory(back.redisUrl) : undefined;
      const t0 = Date.now();
      const open = await openSessions(gw.url, step, 50);
      entry.openMs = Date.now() - t0;
      if (back.redisUrl && memoryBefore !== undefined)
        entry.redisBytesPerSession = ((await redisUsedMemory(back.redisUrl)) - memoryBefore) / open.length;
      entry.sids = open.slice(-50);
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts one step later, so no step is always measured first or last.
      const order = gateways.map((_, i) => gateways[(i + round) % gateways.length]);
      for (const g of order)
        g.runs[round] = await measureEcho(ctx, g.gw.url, g.sids, {
          gateway: g.gw.gatewayPids,
          upstream: () => [...g.gw.upstreamPids(), ...g.back.pids()],
        });
    }
    const first = gateways[0];
    return gateways.map((g) => {
      const cpu = g.runs.map(cpuUsPerCall);
      const ratios = g.runs.map((m, round) => cpuUsPerCall(m) / cpuUsPerCall(first.runs[round]));
      const m = g.runs[cpu.indexOf(median(cpu))];
      return {
        scenario: name,
        target: 'mcp-gateway',
        variant: `${store}, ${g.step} sessions open`,
        workload: `tools/call echo (JSON), c=${ctx.connections} over 50 sessions`,
        ...m,
        extra: {
          ...m.extra,
          store,
          sessionsOpen: g.step,
          openMs: g.openMs,
          redisBytesPerSession: g.redisBytesPerSession,
          cpuUsPerCallRounds: cpu,
          ratioToFirstRounds: ratios,
          ratioToFirst: median(ratios),
        },
      };
    });
  } finally {
    for (const g of gateways) {
      await g.gw.stop();
      await g.back.stop();
    }
  }
}

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const none = async () => {};
  const rows = await steps(ctx, 'memory', async () => ({
    sessions: { store: 'memory', ttlSeconds: 3600 },
    pids: () => [],
    stop: none,
  }));
  rows.push(
    ...(await steps(ctx, 'redis', async () => {
      const { proc: redis, url: redisUrl } = await startRedisServer();
      return {
        sessions: { store: 'redis', redisUrl, ttlSeconds: 3600 },
        pids: () => [redis.pid],
        redisUrl,
        stop: () => redis.stop(),
      };
    })),
  );
  return rows;
}
