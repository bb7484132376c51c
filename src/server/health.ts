import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../observability/metrics.js';
import type { PoolStatus } from '../upstream/pool.js';

export interface HealthOptions {
  upstreams: () => Record<string, PoolStatus>;
  /** Upstreams whose being down makes the replica unready (`required: true`). */
  required: ReadonlySet<string>;
  isDraining: () => boolean;
  /** false while the upstreams are still starting (the port is bound before they are). */
  isStarted: () => boolean;
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
    // One remote server down must not take every replica out of rotation: the others still
    // serve the rest of the catalog. Only a start-up in progress, or a required upstream, counts.
    const upstreamsReady = Object.entries(upstreams).every(
      ([name, u]) => u.state !== 'starting' && (u.state === 'ready' || !options.required.has(name)),
    );
    const started = options.isStarted();
    const ready = started && !options.isDraining() && upstreamsReady && (!store || store.state === 'ready');
    reply.code(ready ? 200 : 503);
    const status = ready ? 'ready' : options.isDraining() ? 'draining' : started ? 'not ready' : 'starting';
    return { status, upstreams, ...(store ? { store } : {}) };
  });

  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', options.metrics.registry.contentType);
    return options.metrics.registry.metrics();
  });
}
