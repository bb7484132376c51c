/**
 * The gateway's own subscribers of its data-path events (events.ts): Prometheus metrics and the
 * audit log. Label values a client chooses were bounded by the publisher (method `_other`, tools
 * only from the catalog); nothing here adds a session or request id to a label.
 */
import { randomUUID } from 'node:crypto';
import { AuditLog } from './audit.js';
import { CIRCUIT_STATES, DataPathEvents, subscribe } from './events.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/**
 * A new gateway's publisher, under an id of its own, with its metrics subscribed, and an audit
 * log when `auditMethods` names any; `unsubscribe` ends both (at the gateway's close).
 */
export function observeGateway(
  metrics: Metrics,
  auditMethods: readonly string[],
  log: Logger,
): { diagnostics: DataPathEvents; unsubscribe: () => void } {
  const diagnostics = new DataPathEvents(randomUUID());
  const undo = [subscribeMetrics(diagnostics.gateway, metrics)];
  const audit = new AuditLog(auditMethods, log);
  if (auditMethods.length > 0) undo.push(subscribeAudit(diagnostics.gateway, audit));
  // Whatever audit.methods says: a guardrail that found something is always on the trail.
  undo.push(
    subscribe(diagnostics.gateway, {
      'guardrail:verdict': (e) => {
        if (e.verdict === 'pass') return;
        const { interceptor, phase, method, verdict, kinds, principal } = e;
        audit.guardrail({ interceptor, phase, method, verdict, kinds, principal }, e.requestId);
      },
      // Every deny is on the trail, with the policies that decided it.
      'policy:decision': (e) => {
        if (e.allowed) return;
        const { action, method, target, policies, principal } = e;
        audit.policyDenied({ action, method, target, policies, principal }, e.requestId);
      },
    }),
  );
  return {
    diagnostics,
    unsubscribe: () => {
      for (const u of undo) u();
    },
  };
}

export function subscribeMetrics(gateway: string, metrics: Metrics): () => void {
  return subscribe(gateway, {
    // Label values by position (labelNames' order): the cell of a label set is found, not rebuilt.
    'request:end': (e) =>
      metrics.operationDuration
        .cell(e.method, e.tool, e.prompt, e.toolError ? 'tool_error' : e.errorCode, e.protocolVersion, 'tcp')
        .observe(e.seconds),
    'upstream:call-end': (e) =>
      metrics.clientOperationDuration
        .cell(e.upstream, e.method, e.tool, e.prompt, e.errorType, e.transport)
        .observe(e.seconds),
    'session:end': (e) => metrics.sessionDuration.observe({ network_transport: 'tcp' }, e.seconds),
    'transport:rejection': (e) => metrics.transportRejections.inc({ error_type: e.errorType }),
    'rate:limited': (e) => metrics.rateLimited.inc({ rule: e.rule }),
    'rate:store-error': (e) => metrics.rateLimitStoreErrors.inc({ outcome: e.outcome }),
    'quota:exceeded': (e) => metrics.quotaExceeded.inc({ quota: e.quota }),
    'quota:store-error': (e) => metrics.quotaStoreErrors.inc({ outcome: e.outcome }),
    'stream:open': (e) => metrics.sseStreamsOpen.inc({ kind: e.kind }),
    'stream:close': (e) => metrics.sseStreamsOpen.dec({ kind: e.kind }),
    'stream:resumption': (e) => metrics.streamResumptions.inc({ outcome: e.outcome }),
    'stream:failure': (e) => metrics.streamFailures.inc({ component: e.component, operation: e.operation }),
    'stream:cut-off': (e) => metrics.streamsCutOff.inc({ kind: e.kind }),
    'connection:refused': () => metrics.connectionsRefused.inc(),
    'token:introspection': (e) => metrics.tokenIntrospections.inc({ outcome: e.outcome }),
    'upstream:workers': (e) => metrics.upstreamWorkers.set({ upstream: e.upstream }, e.count),
    'upstream:restart': (e) => metrics.upstreamRestarts.inc({ upstream: e.upstream }),
    'upstream:start-failure': (e) => metrics.upstreamStartFailures.inc({ upstream: e.upstream }),
    'upstream:stdout-garbage': (e) => metrics.upstreamStdoutGarbage.inc({ upstream: e.upstream }),
    'upstream:retry': (e) => metrics.upstreamRetries.inc({ upstream: e.upstream, reason: e.reason }),
    // A state set: 1 for the current state, 0 for the others.
    'upstream:circuit': (e) => {
      for (const state of CIRCUIT_STATES)
        metrics.upstreamCircuitState.set({ upstream: e.upstream, state }, state === e.state ? 1 : 0);
    },
    'pool:queue': (e) => metrics.poolQueueDepth.set({ upstream: e.upstream }, e.depth),
    'pool:rejection': (e) => metrics.poolRejections.inc({ upstream: e.upstream, reason: e.reason }),
    'fairness:queue': (e) => metrics.fairnessQueued.set({ upstream: e.upstream }, e.depth),
    'fairness:wait': (e) => metrics.fairnessWaits.inc({ upstream: e.upstream, outcome: e.outcome }),
    'config:reload': (e) => metrics.configReloads.inc({ outcome: e.outcome }),
    'tool-search:search': (e) => metrics.toolSearches.inc({ endpoint: e.endpoint, outcome: e.outcome }),
    'tool-search:call': (e) => metrics.toolSearchCalls.inc({ endpoint: e.endpoint }),
    'tool-search:index': (e) => metrics.toolSearchIndexes.inc({ origin: e.origin }),
    'guardrail:verdict': (e) => {
      metrics.interceptorVerdicts.inc({ interceptor: e.interceptor, verdict: e.verdict });
      metrics.interceptorSeconds.observe({ interceptor: e.interceptor }, e.seconds);
    },
    'pin:finding': (e) => metrics.toolDefinitionChanges.inc({ upstream: e.upstream }),
    'cache:lookup': (e) => metrics.cacheLookups.inc({ upstream: e.upstream, method: e.method, outcome: e.outcome }),
    'cache:eviction': (e) => metrics.cacheEvictions.inc({ upstream: e.upstream }),
    'policy:decision': (e) => {
      metrics.policyDecisions.inc({ action: e.action, decision: e.allowed ? 'allow' : 'deny' });
      metrics.policySeconds.observe(e.seconds);
    },
  });
}

/** One audit line per request of an audited method (`audit.methods`). */
export function subscribeAudit(gateway: string, audit: AuditLog): () => void {
  return subscribe(gateway, {
    'request:end': (e) => {
      if (!audit.covers(e.method)) return;
      audit.record(
        {
          method: e.method,
          target: e.target,
          principal: e.principal,
          session: e.stateless ? undefined : e.scope,
          stateless: e.stateless,
          outcome: e.errorType || 'ok',
          ...(e.toolError ? { toolError: true } : {}),
          durationMs: Math.round(e.seconds * 1e4) / 10,
        },
        e.requestId,
      );
    },
    // Whatever audit.methods says: a definition that changed under the gateway is the trail's business.
    'pin:finding': (e) =>
      audit.recordDefinition({ upstream: e.upstream, kind: e.kind, name: e.name, verdict: e.verdict, mode: e.mode }),
  });
}
