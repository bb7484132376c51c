import type { OAuthClientConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import type { Caller } from '../contracts/request-context.js';
import type { StoredToken, TokenStore } from '../contracts/token-store.js';
import { OAuthTokenEndpoint, TokenEndpointFailure } from './oauth-token-endpoint.js';
import { ExchangeFailure } from '../contracts/exchange-failure.js';

const TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:';
const DEFAULT_LIFETIME_S = 300;
const TOKEN_TIMEOUT_MS = 10_000;
/** Exchanged tokens kept in this process, most recently used last; the store holds the rest. */
const LOCAL_MAX = 10_000;
/** Error codes (RFC 6749 5.2, RFC 8693 2.2.2) that refuse this user, not the gateway. */
const PER_USER_ERRORS = new Set([
  'invalid_grant',
  'access_denied',
  'invalid_scope',
  'invalid_target',
  'consent_required',
  'interaction_required',
]);

interface Held {
  authorization: string;
  renewAt: number;
}

/**
 * Tokens of one upstream for each user, by the RFC 8693 token exchange: the client's validated
 * access token is the subject_token, sent with the gateway's client credentials, the upstream's
 * `audience` and/or `resource`, `scopes` and an optional actor token. The answer is held per
 * principal (in this process, and sealed in the token store for the other replicas) until
 * shortly before it expires; concurrent calls of one user share one exchange.
 *
 * A refusal of the user (invalid_grant, access_denied, a 403…) is UPSTREAM_IDENTITY_REFUSED, a
 * GatewayError the circuit breaker never sees; a token endpoint that cannot be reached, or that
 * refuses the gateway's own credentials, is an ExchangeFailure of kind `connect` as for the
 * client credentials grant: every user is affected, so it counts against the upstream.
 */
export class TokenExchange {
  readonly #endpoint: OAuthTokenEndpoint;
  readonly #local = new Map<string, Held>();
  readonly #fetching = new Map<string, Promise<string>>();

  constructor(
    private readonly upstream: string,
    private readonly config: OAuthClientConfig,
    private readonly store: TokenStore | undefined,
  ) {
    this.#endpoint = new OAuthTokenEndpoint(config.tokenUrl, config, TOKEN_TIMEOUT_MS);
  }

  /** The Authorization header value to send for `caller` now. */
  authorization(caller: Caller): Promise<string> {
    const held = this.#local.get(caller.principal);
    if (held && Date.now() < held.renewAt) return Promise.resolve(held.authorization);
    let fetching = this.#fetching.get(caller.principal);
    if (!fetching) {
      fetching = this.#obtain(caller).finally(() => this.#fetching.delete(caller.principal));
      this.#fetching.set(caller.principal, fetching);
    }
    return fetching;
  }

  /** The upstream refused `authorization` for `caller`: the next call exchanges again. */
  async invalidate(caller: Caller, authorization: string): Promise<void> {
    if (this.#local.get(caller.principal)?.authorization !== authorization) return;
    this.#local.delete(caller.principal);
    await this.store?.delete(caller.principal, this.upstream).catch(() => undefined);
  }

  async #obtain(caller: Caller): Promise<string> {
    // Another replica may have exchanged already; a store that cannot answer costs one exchange, not the call.
    const stored = await this.store?.get(caller.principal, this.upstream).catch(() => undefined);
    if (stored && Date.now() < renewAt(stored)) return this.#hold(caller.principal, stored);
    const token = await this.#exchange(caller);
    await this.store?.put(caller.principal, this.upstream, token).catch(() => undefined);
    return this.#hold(caller.principal, token);
  }

  #hold(principal: string, token: StoredToken): string {
    const authorization = `Bearer ${token.accessToken}`;
    this.#local.delete(principal);
    if (this.#local.size >= LOCAL_MAX) this.#local.delete(this.#local.keys().next().value!);
    this.#local.set(principal, { authorization, renewAt: renewAt(token) });
    return authorization;
  }

  async #exchange(caller: Caller): Promise<StoredToken & { issuedAt: number }> {
    const { config } = this;
    const form = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: caller.token.reveal(),
      subject_token_type: `${TOKEN_TYPE}access_token`,
      requested_token_type: `${TOKEN_TYPE}access_token`,
    });
    if (config.audience !== undefined) form.set('audience', config.audience);
    if (config.resource !== undefined) form.set('resource', config.resource);
    if (config.scopes.length > 0) form.set('scope', config.scopes.join(' '));
    if (config.actorToken !== undefined) {
      form.set('actor_token', config.actorToken);
      form.set('actor_token_type', `${TOKEN_TYPE}${config.actorTokenType ?? 'access_token'}`);
    }
    const issuedAt = Date.now();
    let answer: unknown;
    try {
      answer = await this.#endpoint.post(form);
    } catch (err) {
      const refusal = this.#refusal(err);
      if (refusal) throw refusal;
      const said =
        err instanceof TokenEndpointFailure && err.status !== undefined ? `: ${(err.body ?? '').slice(0, 200)}` : '';
      throw new ExchangeFailure('connect', `token endpoint ${err instanceof Error ? err.message : String(err)}${said}`);
    }
    const body: { access_token?: unknown; token_type?: unknown; expires_in?: unknown } = isObject(answer) ? answer : {};
    if (
      typeof body.access_token !== 'string' ||
      body.access_token === '' ||
      typeof body.token_type !== 'string' ||
      body.token_type.toLowerCase() !== 'bearer'
    ) {
      throw new ExchangeFailure('connect', 'token endpoint answered the exchange without a bearer access_token');
    }
    const lifetimeS = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_S;
    return { accessToken: body.access_token, expiresAt: issuedAt + lifetimeS * 1000, issuedAt };
  }

  /** The error a refusal of this user is, or undefined when the refusal is the gateway's (or no refusal). */
  #refusal(err: unknown): GatewayError | undefined {
    if (!(err instanceof TokenEndpointFailure) || err.status === undefined) return undefined;
    let code = '';
    let description = '';
    try {
      const body = JSON.parse(err.body ?? '') as unknown;
      if (isObject(body) && typeof body.error === 'string') code = body.error;
      if (isObject(body) && typeof body.error_description === 'string') description = body.error_description;
    } catch {
      /* not JSON: judged by the status alone */
    }
    const perUser = err.status === 403 || (err.status === 400 && PER_USER_ERRORS.has(code));
    if (!perUser) return undefined;
    const reason = (code || `HTTP ${err.status}`).slice(0, 64);
    return identityRefused(this.upstream, reason, description);
  }
}

export function identityRefused(upstream: string, reason: string, description = ''): GatewayError {
  const said = description ? `: ${description.replace(/[^\x20-\x7e]/g, '').slice(0, 200)}` : '';
  return new GatewayError('UPSTREAM_IDENTITY_REFUSED', `Upstream ${upstream} refused this user (${reason}${said})`, {
    upstream,
    reason,
  });
}

/**
 * Renewed ahead of expiry (10 % of its life, at most 30 s): a call must not leave with a token that dies on the way.
 */
function renewAt(token: StoredToken & { issuedAt?: number }): number {
  const lifetime = token.expiresAt - (token.issuedAt ?? token.expiresAt - DEFAULT_LIFETIME_S * 1000);
  return token.expiresAt - Math.min(30_000, lifetime / 10);
}
