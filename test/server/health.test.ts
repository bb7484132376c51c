/**
 * registerHealth as a module: /healthz, /readyz and /metrics on a Fastify app of their own,
 * listening on 127.0.0.1, over real Metrics. /readyz follows what it is told of the start-up,
 * the upstreams (only required ones, or one still starting, make it unready), draining and the
 * session store's connection.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.js';
import { registerHealth } from '../../src/server/health.js';
import type { PoolStatus } from '../../src/upstream/pool.js';

let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

const pool = (state: PoolStatus['state']): PoolStatus => ({
  state,
  workers: 1,
  ready: state === 'ready' ? 1 : 0,
  inFlight: 0,
  queued: 0,
});

interface Health {
  base: string;
  state: {
    started: boolean;
    draining: boolean;
    upstreams: Record<string, PoolStatus>;
    store: { state: string } | undefined;
  };
  metrics: Metrics;
}

async function health(required: string[] = []): Promise<Health> {
  const state: Health['state'] = {
    started: true,
    draining: false,
    upstreams: { a: pool('ready'), b: pool('ready') },
    store: undefined,
  };
  const metrics = new Metrics({ defaultMetrics: false });
  app = Fastify();
  registerHealth(app, {
    upstreams: () => state.upstreams,
    required: new Set(required),
    isDraining: () => state.draining,
    isStarted: () => state.started,
    metrics,
    store: () => state.store ?? { state: 'ready' },
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  return { base, state, metrics };
}

async function readyz(h: Health): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${h.base}/readyz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('registerHealth', () => {
  it('/healthz answers while the process lives, whatever /readyz says', async () => {
    const h = await health();
    h.state.started = false;
    const res = await fetch(`${h.base}/healthz`);
    expect([res.status, await res.json()]).toEqual([200, { status: 'ok' }]);
  });

  it('/readyz: starting, then ready, then draining', async () => {
    const h = await health();
    h.state.started = false;
    expect(await readyz(h)).toMatchObject({ status: 503, body: { status: 'starting' } });
    h.state.started = true;
    expect(await readyz(h)).toMatchObject({
      status: 200,
      body: { status: 'ready', upstreams: { a: { state: 'ready' } }, store: { state: 'ready' } },
    });
    h.state.draining = true;
    expect(await readyz(h)).toMatchObject({ status: 503, body: { status: 'draining' } });
  });

  it('only a required upstream down, or any still starting, makes the replica unready', async () => {
    const h = await health(['a']);
    h.state.upstreams = { a: pool('ready'), b: pool('down') };
    expect((await readyz(h)).status).toBe(200);
    h.state.upstreams = { a: pool('down'), b: pool('ready') };
    expect(await readyz(h)).toMatchObject({
      status: 503,
      body: { status: 'not ready', upstreams: { a: { state: 'down' } } },
    });
    h.state.upstreams = { a: pool('ready'), b: pool('starting') };
    expect((await readyz(h)).status).toBe(503);
  });

  it('a session store that is not connected makes it unready, and says so', async () => {
    const h = await health();
    h.state.store = { state: 'reconnecting' };
    expect(await readyz(h)).toMatchObject({
      status: 503,
      body: { status: 'not ready', store: { state: 'reconnecting' } },
    });
  });

  it('/metrics is the Prometheus text of the registry', async () => {
    const h = await health();
    const res = await fetch(`${h.base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(h.metrics.registry.contentType);
    const text = await res.text();
    expect(text).toBe(await h.metrics.registry.metrics());
    expect(text).toMatch(/^# HELP mcpgw_/m);
  });
});
