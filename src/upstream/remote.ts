import type { Logger } from 'pino';
import type { HttpUpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { DataPathEvents } from '../observability/events.js';
import { HealthMonitor } from './connection/health.js';
import { HttpEndpoint, type EndpointIdentityOptions } from './wires/http-endpoint.js';
import { HttpUpstream, type HttpUpstreamOptions } from './wires/http.js';
import { LegacySseUpstream } from './wires/legacy-sse.js';
import type { WorkerFactory } from './session-workers.js';
import type { ClientIdentity, UpstreamConnection, UpstreamPeer, UpstreamServerInfo } from '../contracts/upstream.js';

/** What the group holds per remote upstream, beside its workers: shared by all of them. */
export interface RemoteUpstream {
  /** Workers for the pool (or per-session workers): one upstream session each. */
  createWorker: WorkerFactory;
  health: HealthMonitor;
  /** The HTTP side all its workers share (a 2026-07-28 upstream's stateless calls too). */
  endpoint: HttpEndpoint;
  /**
   * One initialize as the gateway (nobody's client), its session ended at once: does it speak 2025, and which revision.
   */
  initializeOnce(): Promise<UpstreamServerInfo>;
  /** Stops pinging and ends every connection; after the workers were closed. */
  close(): Promise<void>;
}

/** A health probe answers nothing the upstream asks: it is nobody's client. */
const PROBE_PEER: UpstreamPeer = {
  request: async (method) => {
    throw new GatewayError('METHOD_NOT_FOUND', `${method} is not available to the gateway's health probe`);
  },
  notification: () => undefined,
};

/** The transport-specific half of an `http` or `sse` upstream; the pools stay transport-agnostic. */
export function createRemoteUpstream(
  config: HttpUpstreamConfig,
  gatewayIdentity: ClientIdentity,
  log: Logger,
  diagnostics: DataPathEvents,
  identity: EndpointIdentityOptions = {},
  /**
   * A 2026-07-28 upstream's health probe (server/discover), while it is (or may be) one; undefined: ping over a 2025
   * session.
   */
  statelessProbe?: () => UpstreamConnection | undefined,
): RemoteUpstream {
  const endpoint = new HttpEndpoint(config, log, diagnostics, identity);
  const make = (options: HttpUpstreamOptions): UpstreamConnection =>
    config.transport === 'sse' ? new LegacySseUpstream(options) : new HttpUpstream(options);
  const health = new HealthMonitor({
    name: config.name,
    config: config.health,
    breaker: endpoint.breaker,
    createProbe: () =>
      statelessProbe?.() ??
      make({ endpoint, identity: gatewayIdentity, log, index: 'health', peer: PROBE_PEER, listen: false }),
    log,
    diagnostics,
  });
  return {
    createWorker: (identity, index, peer, memory) =>
      make({ endpoint, identity, log, index, peer, ...(memory ? { memory } : {}) }),
    health,
    endpoint,
    initializeOnce: async () => {
      const probe = make({ endpoint, identity: gatewayIdentity, log, index: 'era', peer: PROBE_PEER, listen: false });
      try {
        return await probe.start();
      } finally {
        await probe.close();
      }
    },
    close: async () => {
      await health.close();
      await endpoint.close();
    },
  };
}
