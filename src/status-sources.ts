// Wiring only: which running part answers each of /status's questions.
import type { ConfigStatus } from './config/reload-state.js';
import type { GatewayConfig } from './config/schema.js';
import type { ListenStreams } from './stateless/listen-streams.js';
import type { StatusSources } from './server/status/report.js';
import type { VirtualServer } from './gateway/virtual-server.js';
import type { SessionStore } from './session/session-store.js';
import type { RedisStoreStatus } from './session/redis-store.js';
import type { SessionStreams } from './streams/session-streams.js';
import type { PoolStatus } from './upstream/pool.js';
import type { QuotaReport } from './quota/quotas.js';

export interface StatusParts {
  config: GatewayConfig;
  version: string;
  server: VirtualServer;
  store: SessionStore;
  storeStatus: (() => RedisStoreStatus) | undefined;
  streams: SessionStreams;
  listens: ListenStreams;
  upstreamStatus: () => Record<string, PoolStatus>;
  isDraining: () => boolean;
  isReady: () => boolean;
  configStatus: ConfigStatus;
  inputChains: () => number;
  quotas: () => Promise<QuotaReport[]>;
  /** POST replies still being written (the transport's count). */
  activeReplies: () => number;
}

/** The read-only views /status gathers its report from. */
export function statusSources(parts: StatusParts): StatusSources {
  const { config } = parts;
  return {
    version: parts.version,
    startedAt: new Date(),
    upstreams: () => config.upstreams,
    upstreamStatus: parts.upstreamStatus,
    // The main endpoint (the whole catalog), then each virtual server, named by its path.
    servers: () => [
      {
        name: 'main',
        path: config.path,
        catalog: () => parts.server.catalog,
        sessions: () => parts.server.sessionCatalogs(),
      },
      ...parts.server.serverCatalogs().map((s) => ({ name: s.path, ...s })),
    ],
    listsPerSession: (upstream) => parts.server.listsPerSession(upstream),
    sessionStore: config.sessions.store,
    sessions: () => parts.store.size(),
    ...(parts.storeStatus ? { storeState: parts.storeStatus } : {}),
    streams: () => ({ get: parts.streams.size, listen: parts.listens.size, replies: parts.activeReplies() }),
    inputChains: parts.inputChains,
    quotas: parts.quotas,
    config: () => parts.configStatus.snapshot(),
    isReady: parts.isReady,
    isDraining: parts.isDraining,
    pinFlags: () => parts.server.catalog.pinFlags(),
  };
}
