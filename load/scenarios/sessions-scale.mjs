// @ts-check
// Many sessions open (issue 34, item 4): call-json's load (c=50 over 50 of them) while 10, 1,000,
// 10,000 and 100,000 sessions are open (BENCH_SESSION_STEPS), on the memory store and on Redis:
// the gateway's CPU per call should stay flat (within 10 %); Redis memory per session
// (used_memory over the sessions added). Sessions are opened cumulatively on one gateway per
// store, 50 at a time; opening 100,000 takes a minute or two.
import { ECHO_SERVER, startGateway } from '../lib/gateway.mjs';
import { openSessions } from '../lib/mcp.mjs';
import { startRedisServer } from '../lib/processes.mjs';
import { measureEcho } from '../lib/workloads.mjs';

export const name = 'sessions-scale';
export const kind = 'gateway';
export const description =
  'call-json with 10 to 100,000 sessions open, memory store and Redis: CPU per call, Redis bytes per session';
/** The sessions pile up over the steps of one gateway's life: measured once. */
export const once = true;

const STEPS = (process.env.BENCH_SESSION_STEPS ?? '10,1000,10000,100000').split(',').map(Number);

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

/**
 * @param {import('../run.mjs').Context} ctx @param {string} store
 * @param {Record<string, unknown>} sessions @param {() => number[]} extraPids @param {string} [redisUrl]
 */
async function steps(ctx, store, sessions, extraPids, redisUrl) {
  const gw = await startGateway({
    upstreams: [{ name: 'echo', script: ECHO_SERVER, pool: { min: 1, max: 1, maxInFlight: 64 } }],
    sessions,
    extra: { limits: { maxSessions: Math.max(...STEPS) + 1000 } },
  });
  try {
    const rows = [];
    /** @type {string[]} */
    const open = [];
    let memoryBefore = redisUrl ? await redisUsedMemory(redisUrl) : undefined;
    let openedBefore = 0;
    for (const step of STEPS) {
      const t0 = Date.now();
      open.push(...(await openSessions(gw.url, Math.max(0, step - open.length), 50)));
      const openMs = Date.now() - t0;
      const memory = redisUrl ? await redisUsedMemory(redisUrl) : undefined;
      const bytesPerSession =
        memory !== undefined && memoryBefore !== undefined && open.length > openedBefore
          ? (memory - memoryBefore) / (open.length - openedBefore)
          : undefined;
      memoryBefore = memory;
      openedBefore = open.length;
      const sids = open.slice(-50);
      const m = await measureEcho(ctx, gw.url, sids, {
        gateway: gw.gatewayPids,
        upstream: () => [...gw.upstreamPids(), ...extraPids()],
      });
      rows.push({
        scenario: name,
        target: 'mcp-gateway',
        variant: `${store}, ${open.length} sessions open`,
        workload: `tools/call echo (JSON), c=${ctx.connections} over 50 sessions`,
        ...m,
        extra: { ...m.extra, store, sessionsOpen: open.length, openMs, redisBytesPerSession: bytesPerSession },
      });
    }
    return rows;
  } finally {
    await gw.stop();
  }
}

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const rows = await steps(ctx, 'memory', { store: 'memory', ttlSeconds: 3600 }, () => []);
  const { proc: redis, url: redisUrl } = await startRedisServer();
  try {
    rows.push(
      ...(await steps(ctx, 'redis', { store: 'redis', redisUrl, ttlSeconds: 3600 }, () => [redis.pid], redisUrl)),
    );
  } finally {
    await redis.stop();
  }
  return rows;
}
