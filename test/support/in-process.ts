/**
 * Parts of the gateway built in this process for module tests, with nothing of the whole
 * gateway around them: a config's upstreams as the UpstreamGroup builds them (real child
 * processes), a quiet logger, a publisher of data-path events whose events a test can read,
 * request contexts, and sinks that keep what they are sent.
 */
import { randomUUID } from 'node:crypto';
import type { GatewayConfig, StdioUpstreamConfig, UpstreamConfig } from '../../src/config/schema.js';
import type { MessageSink, RequestContext } from '../../src/contracts/request-context.js';
import type { ClientIdentity, UpstreamPeer } from '../../src/contracts/upstream.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/messages.js';
import { DataPathEvents, subscribe, type EventMap, type EventName } from '../../src/observability/events.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { UpstreamGroup, type UpstreamPeers } from '../../src/upstream/group.js';
import { exampleConfig } from './gateway.js';

/** The logger of a module under test: silent unless TEST_LOG_LEVEL says otherwise. */
export function quietLog(): Logger {
  return createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
}

/** How the gateway introduces itself to upstreams it starts for no client. */
export const GATEWAY_IDENTITY: ClientIdentity = {
  clientInfo: { name: 'mcp-gateway', version: 'test' },
  capabilities: {},
  protocolVersion: '2025-06-18',
};

/** A whole config (defaults applied) with these upstreams (objects as in a config file). */
export function configWith(
  upstreams: Array<Record<string, unknown>>,
  overrides: Record<string, unknown> = {},
): GatewayConfig {
  return exampleConfig({ upstreams, ...overrides });
}

/** One stdio upstream's config, defaults applied. */
export function stdioConfig(upstream: Record<string, unknown>): StdioUpstreamConfig {
  const u = configWith([upstream]).upstreams[0]!;
  if (u.transport !== 'stdio') throw new Error('not a stdio upstream');
  return u;
}

/** A peer that takes no requests and keeps the notifications it hears. */
export function quietPeer(notifications: JsonRpcMessage[] = []): UpstreamPeer {
  return {
    request: async (method) => {
      throw new Error(`no client to ask ${method}`);
    },
    notification: (n) => void notifications.push(n),
  };
}

/** A data-path publisher of its own, and what it published of `names`, in order. */
export interface RecordedEvents {
  readonly diagnostics: DataPathEvents;
  readonly seen: Array<{ name: EventName; message: Record<string, unknown> }>;
  of<K extends EventName>(name: K): Array<EventMap[K]>;
  stop(): void;
}

export function recordEvents(names: readonly EventName[]): RecordedEvents {
  const diagnostics = new DataPathEvents(randomUUID());
  const seen: RecordedEvents['seen'] = [];
  const handlers = Object.fromEntries(
    names.map((name) => [name, (message: Record<string, unknown>) => seen.push({ name, message })]),
  );
  const stop = subscribe(diagnostics.gateway, handlers);
  return {
    diagnostics,
    seen,
    of: <K extends EventName>(name: K) =>
      seen.filter((e) => e.name === name).map((e) => e.message as unknown as EventMap[K]),
    stop,
  };
}

/** The upstreams of `upstreams` as the gateway builds them (nothing started); `peers` default to quiet ones. */
export function upstreamGroup(
  upstreams: readonly UpstreamConfig[],
  options: { peers?: UpstreamPeers; diagnostics?: DataPathEvents; log?: Logger } = {},
): UpstreamGroup {
  const peers = options.peers ?? { shared: () => quietPeer(), perSession: () => quietPeer() };
  return new UpstreamGroup(upstreams, {
    identity: GATEWAY_IDENTITY,
    peers,
    logRepeatMs: 60_000,
    log: options.log ?? quietLog(),
    diagnostics: options.diagnostics ?? new DataPathEvents(randomUUID()),
  });
}

/** A sink that keeps every message it is sent (`open: false`: one whose stream is gone). */
export function recordingSink(open = true): MessageSink & { messages: JsonRpcMessage[] } {
  const messages: JsonRpcMessage[] = [];
  return {
    messages,
    send: (m) => {
      if (open) messages.push(m);
      return open;
    },
  };
}

/** A 2025 session's request context: `scope` is its session id. */
export function sessionContext(scope: string, overrides: Partial<RequestContext> = {}): RequestContext {
  return {
    protocolVersion: '2025-06-18',
    stateless: false,
    clientCapabilities: {},
    clientInfo: { name: 'module-test', version: '1' },
    scope,
    sink: recordingSink(),
    sessionSink: recordingSink(),
    ...overrides,
  };
}
