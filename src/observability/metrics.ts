import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CellHistogram } from './cell-histogram.js';

const OPERATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The one metrics module. Names follow Prometheus conventions and OpenTelemetry's MCP semantic
 * conventions; no label ever carries a session or request id.
 */
export class Metrics {
  readonly registry = new Registry();

  /**
   * `error_type`: '' on success, `tool_error` for a result with isError, else the JSON-RPC code
   * (as a string). `network_transport` is the client's: `tcp` (HTTP).
   */
  readonly operationDuration = new CellHistogram(
    'mcp_server_operation_duration_seconds',
    'Duration of MCP requests handled by the gateway',
    [
      'mcp_method_name',
      'gen_ai_tool_name',
      'gen_ai_prompt_name',
      'error_type',
      'mcp_protocol_version',
      'network_transport',
    ] as const,
    OPERATION_BUCKETS,
    this.registry,
  );

  /** The gateway as an MCP client: one call to an upstream, from asking a worker to its answer. */
  readonly clientOperationDuration = new CellHistogram(
    'mcp_client_operation_duration_seconds',
    'Duration of the calls the gateway makes to upstream MCP servers',
    [
      'upstream',
      'mcp_method_name',
      'gen_ai_tool_name',
      'gen_ai_prompt_name',
      'error_type',
      'network_transport',
    ] as const,
    OPERATION_BUCKETS,
    this.registry,
  );

  /** 2025 sessions ended by DELETE (an expired one has no end this replica sees in time). */
  readonly sessionDuration = new Histogram({
    name: 'mcp_server_session_duration_seconds',
    help: 'Duration of MCP sessions (initialize to DELETE, connection close, idle expiry or eviction)',
    labelNames: ['network_transport'] as const,
    buckets: [1, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400],
    registers: [this.registry],
  });

  /** Set by the app: every configured upstream's state, read at scrape time. */
  upstreamStates: () => Record<string, { state: string }> = () => ({});

  readonly upstreamUp: Gauge = new Gauge({
    name: 'mcpgw_upstream_up',
    help:
      'Whether an upstream is ready (as /readyz reports it: a worker up, and for a remote one its health ' +
      'checks passing): 1 yes, 0 no',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
    collect: () => {
      this.upstreamUp.reset();
      for (const [upstream, s] of Object.entries(this.upstreamStates()))
        this.upstreamUp.set({ upstream }, s.state === 'ready' ? 1 : 0);
    },
  });

  readonly rateLimited = new Counter({
    name: 'mcpgw_rate_limited_total',
    help: 'Request messages refused by a rule of rateLimits (RATE_LIMITED), by rule',
    labelNames: ['rule'] as const,
    registers: [this.registry],
  });

  readonly rateLimitStoreErrors = new Counter({
    name: 'mcpgw_rate_limit_store_errors_total',
    help: 'Rate-limit counter store failures or timeouts, by what onStoreError did (allowed, denied)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly quotaExceeded = new Counter({
    name: 'mcpgw_quota_exceeded_total',
    help: 'Tool calls refused by a quota of quotas (QUOTA_EXCEEDED), by quota',
    labelNames: ['quota'] as const,
    registers: [this.registry],
  });

  readonly quotaStoreErrors = new Counter({
    name: 'mcpgw_quota_store_errors_total',
    help: 'Quota counter store failures or timeouts, by what quotas.onStoreError did (allowed, denied)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly transportRejections = new Counter({
    name: 'mcpgw_transport_rejections_total',
    help: 'HTTP requests rejected by the transport before reaching the virtual server',
    labelNames: ['error_type'] as const,
    registers: [this.registry],
  });

  readonly connectionsRefused = new Counter({
    name: 'mcpgw_connections_refused_total',
    help: 'Connections closed as soon as they were accepted because server.maxConnections were open',
    registers: [this.registry],
  });

  /** Set by the app: how many sessions the store holds, read at scrape time. */
  countSessions: () => Promise<number> = async () => 0;

  readonly sessionsActive: Gauge = new Gauge({
    name: 'mcpgw_sessions_active',
    help: 'Sessions known to the session store',
    registers: [this.registry],
    collect: async () => {
      this.sessionsActive.set(await this.countSessions());
    },
  });

  /** Set by the app: stateless requests whose per-session call runs or waits for input here. */
  countInputChains: () => number = () => 0;

  readonly inputChains: Gauge = new Gauge({
    name: 'mcpgw_input_chains',
    help:
      'Stateless (2026-07-28) requests on this replica whose per-session upstream call is running or waiting ' +
      "for the client's input",
    registers: [this.registry],
    collect: () => {
      this.inputChains.set(this.countInputChains());
    },
  });

  /**
   * Sessions in Redis: its state, read at scrape time. The gauges exist only then: a memory
   * store has no connection to lose, and a 0 there would fire every "store down" alert.
   */
  observeStore(status: () => { state: string; cluster?: { failingMasters: string[] } }): void {
    const up: Gauge = new Gauge({
      name: 'mcpgw_session_store_up',
      help: 'Whether the session store (Redis) accepts commands: 1 yes, 0 no (not reported for the memory store)',
      registers: [this.registry],
      collect: () => {
        up.set(status().state === 'ready' ? 1 : 0);
      },
    });
    const failing: Gauge = new Gauge({
      name: 'mcpgw_session_store_failing_masters',
      help:
        'Redis Cluster masters that are failing or do not answer this replica: sessions in their slots ' +
        'cannot be served',
      registers: [this.registry],
      collect: () => {
        failing.reset();
        const cluster = status().cluster;
        if (cluster) failing.set(cluster.failingMasters.length);
      },
    });
  }

  readonly sseStreamsOpen = new Gauge({
    name: 'mcpgw_sse_streams_open',
    help: 'SSE streams currently open on this replica',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly upstreamWorkers = new Gauge({
    name: 'mcpgw_upstream_workers',
    help: 'Live upstream workers per upstream',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  /** Definitions the pin lock does not pin, each counted once per process (gateway/pin-policy.ts). */
  readonly toolDefinitionChanges = new Counter({
    name: 'mcpgw_tool_definition_changes_total',
    help: 'Tool and prompt definitions seen that the pin lock does not pin (changed or never pinned)',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  readonly upstreamRestarts = new Counter({
    name: 'mcpgw_upstream_restarts_total',
    help: 'Upstream workers that exited unexpectedly and were restarted',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  /** A worker that never became ready; one that ran and then exited counts in upstreamRestarts. */
  readonly upstreamStartFailures = new Counter({
    name: 'mcpgw_upstream_start_failures_total',
    help:
      'Upstream workers (shared and per-session) that failed to start: spawn failed, exited or failed before ' +
      'initialize was answered, connection refused',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  /** Started at zero for both outcomes, so a dashboard sees the first rejection as an increase. */
  readonly configReloads = new Counter({
    name: 'mcpgw_config_reloads_total',
    help:
      'Config reloads (SIGHUP or a change of the config file) by outcome: ok (applied) or rejected (invalid; ' +
      'the old config keeps serving)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Endpoints are the configured paths (bounded by the config): the main path and each servers[] path. */
  readonly toolSearches = new Counter({
    name: 'mcpgw_tool_searches_total',
    help: 'search_tools calls by endpoint and outcome: hit (found a tool the caller may call) or empty',
    labelNames: ['endpoint', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly toolSearchIndexes = new Counter({
    name: 'mcpgw_tool_search_indexes_total',
    help: 'Tool search indexes made (one per catalog version and endpoint): built here, or loaded as a replica kept it',
    labelNames: ['origin'] as const,
    registers: [this.registry],
  });

  readonly toolSearchCalls = new Counter({
    name: 'mcpgw_tool_search_calls_total',
    help: "Calls through call_tool by endpoint (each also counts as a tools/call under the real tool's name)",
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  /** Interceptors are the built-ins' and the configured servers' names; verdicts a fixed set (`Verdict`). */
  readonly interceptorVerdicts = new Counter({
    name: 'mcpgw_interceptor_verdicts_total',
    help:
      'Guardrail runs by interceptor and verdict (pass, redacted, truncated, blocked, mutated, error: a failed ' +
      'interceptor server let through; would-*: audit mode)',
    labelNames: ['interceptor', 'verdict'] as const,
    registers: [this.registry],
  });

  readonly interceptorSeconds = new Histogram({
    name: 'mcpgw_interceptor_duration_seconds',
    help: "Time one guardrail took over one message (a call's arguments or result, an upstream's ask or its answer)",
    labelNames: ['interceptor'] as const,
    buckets: [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1],
    registers: [this.registry],
  });

  /** Actions are the policy's few (policy/cedar-schema.ts); decisions allow or deny. */
  readonly policyDecisions = new Counter({
    name: 'mcpgw_policy_decisions_total',
    help: 'Requests the authorization policy decided (authorization.policyFile), by action and decision',
    labelNames: ['action', 'decision'] as const,
    registers: [this.registry],
  });

  readonly policySeconds = new Histogram({
    name: 'mcpgw_policy_decision_duration_seconds',
    help: 'Time the authorization policy took to decide one request',
    buckets: [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01],
    registers: [this.registry],
  });

  readonly upstreamStdoutGarbage = new Counter({
    name: 'mcpgw_upstream_stdout_garbage_total',
    help: 'Lines a stdio upstream wrote to stdout that are not JSON (ignored)',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  readonly poolQueueDepth = new Gauge({
    name: 'mcpgw_pool_queue_depth',
    help: 'Calls waiting for a free upstream worker',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  readonly poolRejections = new Counter({
    name: 'mcpgw_pool_rejections_total',
    help: 'Calls rejected by an upstream pool (queue full or queue timeout)',
    labelNames: ['upstream', 'reason'] as const,
    registers: [this.registry],
  });

  // No principal label: principals are as many as clients.
  readonly fairnessQueued = new Gauge({
    name: 'mcpgw_fairness_queued',
    help: "Calls waiting for their principal's share of an upstream (upstreams[].fairness), this replica",
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  readonly cacheLookups = new Counter({
    name: 'mcpgw_cache_lookups_total',
    help: "Lookups of the result cache: a hit answered from a 2026-07-28 upstream's kept result, a miss asked it",
    labelNames: ['upstream', 'method', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly cacheEvictions = new Counter({
    name: 'mcpgw_cache_evictions_total',
    help: 'Entries the result cache dropped, least recently used first, to stay within cache.maxBytes',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  readonly fairnessWaits = new Counter({
    name: 'mcpgw_fairness_waits_total',
    help: "Calls past their principal's share of an upstream: queued, or refused (FAIRNESS_QUEUE_FULL)",
    labelNames: ['upstream', 'outcome'] as const,
    registers: [this.registry],
  });

  /** A state set: 1 for the current state of a remote upstream's circuit breaker, 0 for the others. */
  readonly upstreamCircuitState = new Gauge({
    name: 'mcpgw_upstream_circuit_state',
    help: 'Circuit breaker state of a remote upstream (1 for the current state)',
    labelNames: ['upstream', 'state'] as const,
    registers: [this.registry],
  });

  readonly upstreamRetries = new Counter({
    name: 'mcpgw_upstream_retries_total',
    help: 'HTTP exchanges with a remote upstream that were tried again (connection failure, 5xx, stream cut)',
    labelNames: ['upstream', 'reason'] as const,
    registers: [this.registry],
  });

  /** Each one was degraded, not fatal: the event went out without an id, or a stream stayed local. */
  readonly streamFailures = new Counter({
    name: 'mcpgw_stream_failures_total',
    help:
      'Event store or bus operations of SSE streams that failed (the stream degraded: events without ids, or ' +
      'local delivery only)',
    labelNames: ['component', 'operation'] as const,
    registers: [this.registry],
  });

  /** Slow readers: `kind` as mcpgw_sse_streams_open's, `reply` for a POST's SSE reply, `websocket`. */
  readonly streamsCutOff = new Counter({
    name: 'mcpgw_streams_cut_off_total',
    help: 'Streams cut off because their reader left more than limits.maxStreamBufferedBytes unsent',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly streamResumptions = new Counter({
    name: 'mcpgw_stream_resumptions_total',
    help:
      'GET requests with Last-Event-ID, by outcome (resumed, unknown: the event is not retained, failed: the ' +
      'event store failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Questions to the authorization server, not answers served from the cache. */
  readonly tokenIntrospections = new Counter({
    name: 'mcpgw_token_introspections_total',
    help: 'Token introspection requests to the authorization server, by outcome (active, inactive, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    for (const outcome of ['ok', 'rejected']) this.configReloads.inc({ outcome }, 0);
  }
}
