import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../observability/metrics.js';
import type { PoolStatus } from '../upstream/pool.js';

export interface HealthOptions {
  upstreams: () => Record<string, PoolStatus>;
  isDraining: () => boolean;
  metrics: Metrics;
  /** The session store's connection state, when it has one (Redis); not ready unless 'ready'. */
  store?: () => { state: string };
}

/** Liveness, readiness and the Prometheus scrape endpoint. */
export function registerHealth(app: FastifyInstance, options: HealthOptions): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const upstreams = options.upstreams();
    const store = options.store?.();
    const ready = !options.isDraining() && Object.values(upstreams).every((u) => u.state === 'ready') && (!store || store.state === 'ready');
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ready' : options.isDraining() ? 'draining' : 'not ready', upstreams, ...(store ? { store } : {}) };
  });

  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', options.metrics.registry.contentType);
    return options.metrics.registry.metrics();
  });
}
