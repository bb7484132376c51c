/**
 * The rules of `rateLimits:`, compiled once (per load or reload), and the check of one request
 * message against them: every rule that matches takes one admission of its counter, in order;
 * the first that has none left refuses the message with RATE_LIMITED.
 *
 * Who a request is and how `match` fits it: request-facts.ts (shared with the quotas).
 */
import type { Logger } from 'pino';
import type { RateLimitKey, RateLimitRuleConfig, RateLimitsConfig } from '../config/schema.js';
import type { RequestContext } from '../contracts/request-context.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcRequest } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import { LogThrottle, suppressedField } from '../observability/log-throttle.js';
import type { CounterShape, CounterStore } from './counter-store.js';
import { FactsMatch, factsOf, type Admission, type Facts, type RoutesOf } from './request-facts.js';

export { requester, type RoutesOf } from './request-facts.js';

class Rule {
  readonly name: string;
  readonly shape: CounterShape;
  readonly #key: RateLimitKey;
  readonly #match: FactsMatch;

  constructor(config: RateLimitRuleConfig) {
    this.name = config.name;
    this.shape = { limit: config.limit, windowMs: config.windowMs, burst: config.burst };
    this.#key = config.key;
    this.#match = new FactsMatch(config.match);
  }

  get needsServer(): boolean {
    return this.#match.needsServer || this.#key === 'server';
  }

  /** The counter's key for `facts`, or undefined when the rule does not apply. */
  counter(facts: Facts): string | undefined {
    if (!this.#match.fits(facts)) return undefined;
    // The name's length first: principals and tools may hold any character, the separator too.
    switch (this.#key) {
      case 'principal':
        return `${this.name}:p:${facts.who}`;
      case 'principal+tool':
        return facts.tool === undefined ? undefined : `${this.name}:pt:${facts.who.length}:${facts.who}:${facts.tool}`;
      case 'tool':
        return facts.tool === undefined ? undefined : `${this.name}:t:${facts.tool}`;
      case 'server':
        return facts.server === undefined ? undefined : `${this.name}:s:${facts.server}`;
      case 'global':
        return `${this.name}:g`;
    }
  }
}

export class RateLimiter implements Admission {
  readonly #rules: Rule[];
  readonly #needsServer: boolean;
  readonly #deny: boolean;
  readonly #throttle = new LogThrottle();

  constructor(
    config: RateLimitsConfig,
    private readonly store: CounterStore,
    private readonly events: DataPathEvents,
    private readonly log: Logger,
  ) {
    this.#rules = config.rules.map((r) => new Rule(r));
    this.#needsServer = this.#rules.some((r) => r.needsServer);
    this.#deny = config.onStoreError === 'deny';
  }

  get empty(): boolean {
    return this.#rules.length === 0;
  }

  /** Resolves (or returns) when `request` may go on; rejects (or throws) RATE_LIMITED. */
  admit(ctx: RequestContext, request: JsonRpcRequest, routes: RoutesOf): void | Promise<void> {
    const facts = factsOf(ctx, request, routes, this.#needsServer);
    for (let i = 0; i < this.#rules.length; i++) {
      const rule = this.#rules[i]!;
      const key = rule.counter(facts);
      if (key === undefined) continue;
      const wait = this.store.take(key, rule.shape);
      if (wait instanceof Promise) return this.#later(wait, rule, i, facts);
      if (wait > 0) this.#refuse(rule, wait);
    }
  }

  /** The rest of the rules, once a remote store has answered for rule `i`. */
  async #later(pending: Promise<number>, rule: Rule, i: number, facts: Facts): Promise<void> {
    await this.#settle(pending, rule);
    for (let j = i + 1; j < this.#rules.length; j++) {
      const next = this.#rules[j]!;
      const key = next.counter(facts);
      if (key !== undefined) await this.#settle(this.store.take(key, next.shape), next);
    }
  }

  async #settle(pending: number | Promise<number>, rule: Rule): Promise<void> {
    let wait: number;
    try {
      wait = await pending;
    } catch (err) {
      this.#storeFailed(err, rule);
      return;
    }
    if (wait > 0) this.#refuse(rule, wait);
  }

  #storeFailed(err: unknown, rule: Rule): void {
    const outcome = this.#deny ? 'denied' : 'allowed';
    this.events.emit('rate:store-error', { outcome });
    const suppressed = this.#throttle.take('store');
    if (suppressed !== undefined)
      this.log.warn(
        { err, rule: rule.name, outcome, ...suppressedField(suppressed) },
        'rate limits: counter store failed',
      );
    if (this.#deny)
      throw new GatewayError('RATE_LIMITED', 'Rate limit store unavailable; retry later', {
        rule: rule.name,
        retryAfterMs: 1000,
        storeError: true,
      });
  }

  #refuse(rule: Rule, retryAfterMs: number): never {
    this.events.emit('rate:limited', { rule: rule.name });
    throw new GatewayError(
      'RATE_LIMITED',
      `Rate limit "${rule.name}" reached (${rule.shape.limit} per ${rule.shape.windowMs} ms): ` +
        `retry in ${retryAfterMs} ms`,
      { rule: rule.name, retryAfterMs },
    );
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
