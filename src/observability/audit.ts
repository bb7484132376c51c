import type { Logger } from './logger.js';

export interface AuditEntry {
  method: string;
  /** The tool or prompt name, or the resource URI, as the client named it. */
  target?: string | undefined;
  /** With auth on: the token's issuer and subject. */
  principal?: string | undefined;
  /** A 2025 session's id; absent for stateless requests. */
  session?: string | undefined;
  stateless: boolean;
  /** `ok`, or the error type from the error table (or the upstream's JSON-RPC code). */
  outcome: string;
  /** A tools/call whose result says isError: the tool ran and failed. */
  toolError?: boolean;
  durationMs: number;
}

export interface GuardrailEntry {
  interceptor: string;
  phase: string;
  method: string;
  verdict: string;
  kinds: readonly string[];
  principal?: string | undefined;
}

export interface PolicyAuditEntry {
  action: string;
  method: string;
  target: string;
  policies: readonly string[];
  principal?: string | undefined;
}

export interface DefinitionAuditEntry {
  upstream: string;
  kind: 'tools' | 'prompts';
  /** The upstream's own name for it. */
  name: string;
  verdict: 'TOOL_DEFINITION_CHANGED' | 'TOOL_NOT_PINNED';
  /** warn: served anyway; enforce: withheld. */
  mode: 'warn' | 'enforce';
}

/**
 * One log line per audited request (`audit.methods`): who asked what, how it ended and how long
 * it took. Never arguments or results: those may carry anything, and an audit trail must be safe
 * to ship to any log store. Written at info level whatever `logLevel` says, so that quieting the
 * gateway's own log does not silence the trail.
 */
export class AuditLog {
  readonly #methods: ReadonlySet<string>;
  readonly #log: Logger;

  constructor(methods: readonly string[], log: Logger) {
    this.#methods = new Set(methods);
    this.#log = log.child({ component: 'audit' }, { level: 'info' });
  }

  covers(method: string): boolean {
    return this.#methods.has(method);
  }

  /** A guardrail's finding: which interceptor, on what, and the kinds found (never the text). */
  guardrail(entry: GuardrailEntry, requestId?: string): void {
    this.#log.info(
      requestId === undefined ? { guardrail: entry } : { reqId: requestId, guardrail: entry },
      'guardrail',
    );
  }

  /** A request the authorization policy denied, with the ids of the policies that decided (never arguments). */
  policyDenied(entry: PolicyAuditEntry, requestId?: string): void {
    this.#log.info(requestId === undefined ? { policy: entry } : { reqId: requestId, policy: entry }, 'policy denied');
  }

  /** A tool or prompt definition the pin lock does not pin (never its text). */
  recordDefinition(entry: DefinitionAuditEntry): void {
    this.#log.info({ audit: { event: 'definition-not-pinned', ...entry } }, 'definition not pinned');
  }

  /** `requestId`: the HTTP request's, under the key Fastify's own request lines use. */
  record(entry: AuditEntry, requestId?: string): void {
    if (requestId === undefined) this.#log.info({ audit: entry }, 'mcp request');
    else this.#log.info({ reqId: requestId, audit: entry }, 'mcp request');
  }
}
