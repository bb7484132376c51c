// @ts-check
// Baseline: bare Fastify plus one hop to the upstream and back (relay-floor-server.mjs), under
// the load of call-json: to examples/echo/server.mjs over stdio (also with one Redis GET per
// request: call-redis at cacheMs 0), and to echo-http-fast.mjs over Streamable HTTP (call-http's
// upstream). What a relay costs before it does anything a gateway
// must do: bare-fastify to this row is the hop's cost, this row to call-json (call-http) the
// gateway's own work.
import { measureBaselineCalls, startBaselineServer } from '../lib/baseline.mjs';
import { ECHO_SERVER, startHttpEcho } from '../lib/gateway.mjs';
import { descendants, startRedisServer } from '../lib/processes.mjs';

export const name = 'relay-floor';
export const kind = 'baseline';
export const description =
  'bare Fastify relaying each tools/call to the echo server, over stdio and over Streamable HTTP (fresh ids, nothing else): the floor of a gateway';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const rows = [await measureRelay(ctx, 'stdio', ['stdio', ECHO_SERVER], () => [])];
  const { proc: redis, url: redisUrl } = await startRedisServer();
  try {
    rows.push(
      await measureRelay(ctx, 'stdio, Redis GET per request', ['stdio', ECHO_SERVER, redisUrl], () => [redis.pid]),
    );
  } finally {
    await redis.stop();
  }
  const { proc: upstream, url } = await startHttpEcho();
  try {
    rows.push(await measureRelay(ctx, 'HTTP upstream', ['http', url], () => [upstream.pid]));
  } finally {
    await upstream.stop();
  }
  return rows;
}

/**
 * @param {import('../run.mjs').Context} ctx
 * @param {string} variant
 * @param {string[]} hop relay-floor-server.mjs's arguments
 * @param {() => number[]} upstreamPids besides the relay's own children
 */
async function measureRelay(ctx, variant, hop, upstreamPids) {
  const { proc, url } = await startBaselineServer('relay-floor', 'relay-floor-server.mjs', hop);
  try {
    const m = await measureBaselineCalls(ctx, url, {
      server: () => [proc.pid],
      upstream: () => [...descendants(proc.pid), ...upstreamPids()],
    });
    return { scenario: name, target: 'fastify + one hop', variant, workload: 'tools/call (JSON)', ...m };
  } finally {
    await proc.stop();
  }
}
