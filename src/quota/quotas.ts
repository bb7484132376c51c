/**
 * The rules of `quotas:`, compiled once (per load or reload): a tools/call is checked against
 * every quota that matches it (its tool, the upstream that serves it, its principal: the rate
 * limits' facts and globs, rate-limit/request-facts.ts), and refused with QUOTA_EXCEEDED by the
 * first whose window is used up; admitted, it counts one call of each. A call's time upstream is
 * added as the call ends (the data path's upstream:call-end, heard by live-quotas.ts), to the
 * window it ends in.
 */
import type { Logger } from 'pino';
import type { QuotaRuleConfig, QuotasConfig, QuotaWindow } from '../config/schema.js';
import type { RequestContext } from '../contracts/request-context.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcRequest } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import { LogThrottle, suppressedField } from '../observability/log-throttle.js';
import { FactsMatch, factsOf, type Admission, type Facts, type RoutesOf } from '../rate-limit/request-facts.js';
import type { QuotaCounter, QuotaLimits, QuotaMeasure, QuotaStore, QuotaVerdict } from './quota-store.js';
import { windowAt } from './windows.js';

/** One quota in /status: this window's top consumers of each measure it limits. */
export interface QuotaReport {
  name: string;
  window: QuotaWindow;
  windowStart: string;
  resetAt: string;
  measures: Array<{ measure: QuotaMeasure; limit: number; top: Array<{ principal: string; used: number }> }>;
  /** The store did not answer: no top consumers known. */
  unavailable?: true;
}

/** A call's end as a quota hears it. */
export interface CallSpent {
  who: string;
  upstream: string;
  /** The tool as the catalog names it ('' when it has none). */
  tool: string;
  seconds: number;
}

class Quota {
  readonly name: string;
  readonly window: QuotaWindow;
  readonly limits: QuotaLimits;
  readonly #match: FactsMatch;

  constructor(config: QuotaRuleConfig) {
    this.name = config.name;
    this.window = config.window;
    this.limits = { calls: config.calls, upstreamSeconds: config.upstreamSeconds };
    this.#match = new FactsMatch(config.match);
  }

  fits(facts: Facts): boolean {
    return this.#match.fits(facts);
  }

  counter(who: string, now: number): QuotaCounter {
    const span = windowAt(this.window, now);
    return { quota: this.name, window: span.id, who, expireAt: span.end };
  }
}

export class Quotas implements Admission {
  readonly #quotas: Quota[];
  readonly #timed: Quota[];
  readonly #deny: boolean;
  readonly #top: number;
  readonly #throttle = new LogThrottle();

  constructor(
    config: QuotasConfig,
    private readonly store: QuotaStore,
    private readonly events: DataPathEvents,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.#quotas = config.rules.map((r) => new Quota(r));
    this.#timed = this.#quotas.filter((q) => q.limits.upstreamSeconds !== undefined);
    this.#deny = config.onStoreError === 'deny';
    this.#top = config.topConsumers;
  }

  get empty(): boolean {
    return this.#quotas.length === 0;
  }

  /** Whether any quota counts time upstream (else no call's end need be heard). */
  get timed(): boolean {
    return this.#timed.length > 0;
  }

  /** Resolves (or returns) when `request` may go on; rejects (or throws) QUOTA_EXCEEDED. Tool calls only. */
  admit(ctx: RequestContext, request: JsonRpcRequest, routes: RoutesOf): void | Promise<void> {
    if (request.method !== 'tools/call') return;
    const facts = factsOf(ctx, request, routes, false);
    // A tool the catalog lacks is refused anyway, and would let a client mint counters.
    if (facts.tool === undefined) return;
    const now = this.now();
    for (let i = 0; i < this.#quotas.length; i++) {
      const quota = this.#quotas[i]!;
      if (!quota.fits(facts)) continue;
      const verdict = this.store.admit(quota.counter(facts.who, now), quota.limits);
      if (verdict instanceof Promise) return this.#later(verdict, quota, i, facts, now);
      if (verdict !== 'ok') this.#refuse(quota, verdict, now);
    }
  }

  /** The rest of the quotas, once a remote store has answered for quota `i`. */
  async #later(pending: Promise<QuotaVerdict>, quota: Quota, i: number, facts: Facts, now: number): Promise<void> {
    await this.#settle(pending, quota, now);
    for (let j = i + 1; j < this.#quotas.length; j++) {
      const next = this.#quotas[j]!;
      if (next.fits(facts)) await this.#settle(this.store.admit(next.counter(facts.who, now), next.limits), next, now);
    }
  }

  async #settle(pending: QuotaVerdict | Promise<QuotaVerdict>, quota: Quota, now: number): Promise<void> {
    let verdict: QuotaVerdict;
    try {
      verdict = await pending;
    } catch (err) {
      this.#storeFailed(err, quota.name);
      if (this.#deny)
        throw new GatewayError('QUOTA_EXCEEDED', 'Quota store unavailable; retry later', {
          quota: quota.name,
          retryAfterMs: 1000,
          storeError: true,
        });
      return;
    }
    if (verdict !== 'ok') this.#refuse(quota, verdict, now);
  }

  /** A call ended: its seconds upstream go to every timed quota that fits it, in the window it ended in. */
  spent(call: CallSpent): void {
    if (call.tool === '' || !(call.seconds > 0)) return;
    const facts: Facts = { method: 'tools/call', who: call.who, tool: call.tool, server: call.upstream };
    const now = this.now();
    for (const quota of this.#timed) {
      if (!quota.fits(facts)) continue;
      try {
        const added = this.store.addSeconds(quota.counter(call.who, now), call.seconds);
        if (added instanceof Promise) added.catch((err: unknown) => this.#storeFailed(err, quota.name));
      } catch (err) {
        this.#storeFailed(err, quota.name);
      }
    }
  }

  /** Each quota's window now, and its top consumers (topConsumers of each measure). */
  async report(): Promise<QuotaReport[]> {
    const now = this.now();
    return Promise.all(
      this.#quotas.map(async (quota): Promise<QuotaReport> => {
        const span = windowAt(quota.window, now);
        const head = {
          name: quota.name,
          window: quota.window,
          windowStart: new Date(span.start).toISOString(),
          resetAt: new Date(span.end).toISOString(),
        };
        const limited = (['calls', 'upstreamSeconds'] as const).flatMap((measure) => {
          const limit = quota.limits[measure];
          return limit === undefined ? [] : [{ measure, limit }];
        });
        try {
          const measures = await Promise.all(
            limited.map(async ({ measure, limit }) => {
              const top = await this.store.top(quota.name, span.id, measure, this.#top);
              return { measure, limit, top: top.map((u) => ({ principal: u.who, used: u.used })) };
            }),
          );
          return { ...head, measures };
        } catch {
          return { ...head, measures: limited.map((m) => ({ ...m, top: [] })), unavailable: true };
        }
      }),
    );
  }

  #storeFailed(err: unknown, quota: string): void {
    const outcome = this.#deny ? 'denied' : 'allowed';
    this.events.emit('quota:store-error', { outcome });
    const suppressed = this.#throttle.take('store');
    if (suppressed !== undefined)
      this.log.warn({ err, quota, outcome, ...suppressedField(suppressed) }, 'quotas: counter store failed');
  }

  #refuse(quota: Quota, measure: QuotaMeasure, now: number): never {
    const span = windowAt(quota.window, now);
    const limit = quota.limits[measure]!;
    this.events.emit('quota:exceeded', { quota: quota.name });
    const what = measure === 'calls' ? `${limit} calls` : `${limit} s upstream`;
    throw new GatewayError('QUOTA_EXCEEDED', `Quota "${quota.name}" used up (${what} per ${quota.window} UTC)`, {
      quota: quota.name,
      measure,
      limit,
      resetAt: new Date(span.end).toISOString(),
      retryAfterMs: Math.max(1, span.end - now),
    });
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
