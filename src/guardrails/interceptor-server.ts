// An interceptor server (SEP-2624 draft, config `interceptors: [{ name, server, events, onError }]`):
// connected on first use through the upstream layer's wires, its interceptors learnt with
// interceptors/list, each run an interceptor/invoke per matching interceptor. Every wait is bounded
// (the entry's timeoutMs, the reply's size); a failure follows onError, and a crashed server is
// started again on a later call, not before INTERCEPTOR_RESTART_BACKOFF_MS.
import type { Logger } from 'pino';
import { interceptorUpstream } from '../config/interceptor-servers.js';
import type { ServerInterceptorConfig } from '../config/interceptors.js';
import {
  INTERCEPTOR_CONNECT_TIMEOUT_MS,
  INTERCEPTOR_IDLE_CLOSE_MS,
  INTERCEPTOR_MAX_REPLY_BYTES,
  INTERCEPTOR_RESTART_BACKOFF_MS,
} from '../config/limits.js';
import type { ClientIdentity, McpResult } from '../contracts/upstream.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { DataPathEvents } from '../observability/events.js';
import { singleConnection, type SingleConnection } from '../upstream/single-connection.js';
import type { Interceptor, Outcome, Phase, RunFacts } from './builtin-interceptors.js';
import { parseDescriptors, parseInvokeResult, WireError, type Descriptor } from './interceptor-wire.js';

export interface InterceptorServerDeps {
  log: Logger;
  diagnostics: DataPathEvents;
  identity: ClientIdentity;
  env?: NodeJS.ProcessEnv;
}

/** Why a server's run failed: data.reason of INTERCEPTOR_FAILED, and the audit line's. */
type FailureReason = 'timeout' | 'unavailable' | 'protocol' | 'too-large';

class InterceptorFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    detail: string,
  ) {
    super(detail);
  }
}

export class InterceptorServer implements Interceptor {
  readonly name: string;
  readonly takes = 'params' as const;
  readonly events: ReadonlySet<string>;
  #conn: SingleConnection | undefined;
  #ready: Promise<readonly Descriptor[]> | undefined;
  #failedAt = 0;
  #closed = false;
  #usedAt = 0;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly entry: ServerInterceptorConfig,
    private readonly deps: InterceptorServerDeps,
  ) {
    this.name = entry.name;
    this.events = new Set(entry.events);
  }

  async run(value: unknown, phase: Phase, facts: RunFacts): Promise<Outcome> {
    this.#usedAt = Date.now();
    const deadline = Date.now() + (this.entry.timeoutMs ?? 2000);
    try {
      const descriptors = await this.#within(this.#descriptors(), deadline, 'connecting');
      const mine = descriptors.filter((d) => d.hooks.some((h) => h.phase === phase && matches(h.events, facts.method)));
      // The draft's order: mutators before validators on a request, validators first on a response.
      const order = phase === 'request' ? ['mutation', 'validation'] : ['validation', 'mutation'];
      mine.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
      return await this.#chain(mine, value, phase, facts, deadline);
    } catch (err) {
      return this.#failed(err, value, phase);
    }
  }

  async #chain(
    descriptors: readonly Descriptor[],
    value: unknown,
    phase: Phase,
    facts: RunFacts,
    deadline: number,
  ): Promise<Outcome> {
    const audit = this.entry.mode === 'audit';
    const refused: string[] = [];
    const mutated: string[] = [];
    let current = value;
    for (const d of descriptors) {
      const reply = await this.#invoke(d, current, phase, facts, deadline);
      const result = parseInvokeResult(reply, d);
      if (result.type === 'validation' && !result.valid) {
        refused.push(d.name);
        if (!audit) break;
      } else if (result.type === 'mutation' && result.modified) {
        mutated.push(d.name);
        if (!audit) current = result.payload;
      }
    }
    if (refused.length > 0) return { verdict: audit ? 'would-block' : 'blocked', value, kinds: refused };
    if (mutated.length > 0) return { verdict: audit ? 'would-mutate' : 'mutated', value: current, kinds: mutated };
    return { verdict: 'pass', value, kinds: [] };
  }

  async #invoke(d: Descriptor, payload: unknown, phase: Phase, facts: RunFacts, deadline: number): Promise<unknown> {
    const conn = this.#conn?.connection;
    if (!conn) throw new InterceptorFailure('unavailable', 'not connected');
    const params = {
      name: d.name,
      event: facts.method,
      phase,
      payload,
      timeoutMs: Math.max(1, deadline - Date.now()),
      // The draft leaves the context open; these are what the gateway knows of the request.
      context: {
        ...(facts.principal !== undefined ? { principal: facts.principal } : {}),
        ...(facts.requestId !== undefined ? { requestId: facts.requestId } : {}),
        timestamp: new Date().toISOString(),
      },
    };
    const call = conn.call('interceptor/invoke', params);
    try {
      return bounded(await this.#within(call.promise, deadline, 'interceptor/invoke'));
    } catch (err) {
      call.cancel(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
  }

  /** Connects and lists once; a failure is kept for the back-off, then the next call starts it again. */
  #descriptors(): Promise<readonly Descriptor[]> {
    if (this.#closed) return Promise.reject(new InterceptorFailure('unavailable', 'closed'));
    if (this.#ready) return this.#ready;
    if (Date.now() - this.#failedAt < INTERCEPTOR_RESTART_BACKOFF_MS)
      return Promise.reject(new InterceptorFailure('unavailable', 'failed to start moments ago'));
    const ready = this.#connect();
    this.#ready = ready;
    ready.catch(() => {
      if (this.#ready === ready) this.#reset();
    });
    return ready;
  }

  async #connect(): Promise<readonly Descriptor[]> {
    const { log, diagnostics, identity, env } = this.deps;
    const problems: string[] = [];
    const config = interceptorUpstream(this.entry, env ?? process.env, problems);
    if (problems.length > 0) throw new InterceptorFailure('unavailable', problems.join('; '));
    const conn = singleConnection(config, identity, log, diagnostics);
    this.#conn = conn;
    this.#watchIdle();
    conn.connection.onExit((reason) => {
      if (this.#conn !== conn) return;
      log.warn({ interceptor: this.name, reason }, 'interceptor server ended; started again on a later call');
      this.#reset();
    });
    try {
      // Bounded on its own: a server that never answers initialize is started again, not waited for.
      const listing = (async () => {
        await conn.connection.start();
        return parseDescriptors(bounded(await conn.connection.call('interceptors/list', {}).promise));
      })();
      return await this.#within(listing, Date.now() + INTERCEPTOR_CONNECT_TIMEOUT_MS, 'connecting');
    } catch (err) {
      throw err instanceof InterceptorFailure || err instanceof WireError
        ? err
        : new InterceptorFailure('unavailable', String(err));
    }
  }

  /** Unused for INTERCEPTOR_IDLE_CLOSE_MS, it is stopped (so an entry a reload dropped ends); started again on use. */
  #watchIdle(): void {
    clearInterval(this.#idleTimer);
    this.#idleTimer = setInterval(() => {
      if (Date.now() - this.#usedAt < INTERCEPTOR_IDLE_CLOSE_MS || !this.#conn) return;
      clearInterval(this.#idleTimer);
      this.#reset();
      this.#failedAt = 0; // (idle is no failure: no back-off)
    }, INTERCEPTOR_IDLE_CLOSE_MS / 4);
    this.#idleTimer.unref();
  }

  #reset(): void {
    const conn = this.#conn;
    this.#conn = undefined;
    this.#ready = undefined;
    this.#failedAt = Date.now();
    void conn?.close().catch(() => undefined);
  }

  #within<T>(work: Promise<T>, deadline: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new InterceptorFailure('timeout', `${what} took too long`)),
        Math.max(0, deadline - Date.now()),
      );
    });
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }

  #failed(err: unknown, value: unknown, phase: Phase): Outcome {
    const reason: FailureReason =
      err instanceof InterceptorFailure ? err.reason : err instanceof WireError ? 'protocol' : 'unavailable';
    this.deps.log.warn({ interceptor: this.name, phase, reason, err: String(err) }, 'interceptor server failed');
    if (this.entry.onError === 'allow' || this.entry.mode === 'audit')
      return { verdict: 'error', value, kinds: [reason] };
    throw new GatewayError('INTERCEPTOR_FAILED', `The ${this.name} interceptor server failed (${reason})`, {
      interceptor: this.name,
      phase,
      reason,
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#idleTimer);
    const conn = this.#conn;
    this.#conn = undefined;
    await conn?.close().catch(() => undefined);
  }
}

function matches(events: readonly string[], method: string): boolean {
  return events.includes(method) || events.includes('*');
}

/** A reply past INTERCEPTOR_MAX_REPLY_BYTES is a failure, not a message to pass on. */
function bounded(reply: McpResult): McpResult {
  const size = Buffer.byteLength(JSON.stringify(reply));
  if (size > INTERCEPTOR_MAX_REPLY_BYTES)
    throw new InterceptorFailure('too-large', `a reply of ${size} bytes (limit ${INTERCEPTOR_MAX_REPLY_BYTES})`);
  return reply;
}
