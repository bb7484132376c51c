import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { OAuthClientConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import type { Caller } from '../contracts/request-context.js';
import type { PendingAuthorization, StoredToken, TokenStore } from '../contracts/token-store.js';
import { OAuthTokenEndpoint, TokenEndpointFailure } from './oauth-token-endpoint.js';
import { UserGrantMetadata } from './oauth-metadata.js';
import { ExchangeFailure } from '../contracts/exchange-failure.js';
import { identityRefused } from './token-exchange.js';

const DEFAULT_LIFETIME_S = 300;
const TOKEN_TIMEOUT_MS = 10_000;
/** How long a link the user was given stays good. */
const PENDING_MS = 10 * 60_000;
/** A token with a refresh token is kept this long after its access token ends: the refresh renews it. */
const REFRESH_RETENTION_MS = 30 * 24 * 3600_000;
/** How long a refused refresh waits for a rival replica's rotated token to appear in the store. */
const ROTATION_WAITS_MS = [50, 150, 300];
/** Token endpoint errors about the gateway's client, not the user: every user is affected. */
const GATEWAY_ERRORS = new Set(['invalid_client', 'unauthorized_client', 'unsupported_grant_type']);

/**
 * Each user's own token for one upstream, by the OAuth 2.1 authorization code grant with PKCE
 * (S256). A call of a user without a token throws URL_ELICITATION_REQUIRED naming a link to the
 * gateway's /oauth/start with a fresh state: a pending authorization, bound to the user and the
 * upstream, sealed in the token store with its code_verifier, so whichever replica the browser
 * reaches can finish it. /oauth/callback takes the state (once), exchanges the code and stores
 * the token sealed for that principal alone.
 *
 * Tokens are read from the store on every call (no copy in this process): a revocation on one
 * replica holds on all at once. An access token near its end is refreshed with its refresh
 * token, and the new refresh token (rotation) replaces the old in the store. Refusals of the
 * user are UPSTREAM_IDENTITY_REFUSED; an authorization server that cannot be reached is an
 * ExchangeFailure of kind `connect`, as for the other grants.
 */
export class AuthorizationCode {
  readonly #endpoint: OAuthTokenEndpoint;
  readonly #metadata: UserGrantMetadata;
  readonly #refreshing = new Map<string, Promise<string>>();

  constructor(
    private readonly upstream: string,
    private readonly config: OAuthClientConfig,
    private readonly store: TokenStore,
  ) {
    this.#endpoint = new OAuthTokenEndpoint(config.tokenUrl, config, TOKEN_TIMEOUT_MS);
    this.#metadata = new UserGrantMetadata(config);
  }

  /** The Authorization header value for `caller` now; throws URL_ELICITATION_REQUIRED when they have granted none. */
  async authorization(caller: Caller): Promise<string> {
    const token = await this.#stored(caller.principal);
    if (token && Date.now() < renewAt(token)) return `Bearer ${token.accessToken}`;
    if (token?.refreshToken !== undefined) return this.#refreshOnce(caller.principal, token);
    throw await this.#elicit(caller.principal, caller.session);
  }

  /** The upstream refused `authorization`: a refresh token gets one more try, else the user is asked again. */
  async invalidate(caller: Caller, authorization: string): Promise<void> {
    const token = await this.#stored(caller.principal);
    if (!token || `Bearer ${token.accessToken}` !== authorization) return;
    if (token.refreshToken === undefined) return this.store.delete(caller.principal, this.upstream);
    await this.store.put(
      caller.principal,
      this.upstream,
      { ...token, expiresAt: 0 },
      Date.now() + REFRESH_RETENTION_MS,
    );
  }

  /** Where /oauth/start sends the browser for `pending`. */
  async authorizeUrl(state: string, pending: PendingAuthorization): Promise<URL> {
    const { authorization } = await this.#metadata.endpoints();
    const url = new URL(authorization);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: this.config.clientId,
      redirect_uri: this.config.redirectUri!,
      state,
      code_challenge: createHash('sha256').update(pending.verifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    if (this.config.scopes.length > 0) params.scope = this.config.scopes.join(' ');
    if (this.config.resource !== undefined) params.resource = this.config.resource;
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url;
  }

  /**
   * RFC 9207 (mix-up defence): an authorization response, code or error, must name this
   * upstream's authorization server in `iss` when it names one, and must name one when that
   * server's metadata says it always does. Otherwise the browser may bring a response of another
   * server (another upstream's) to this upstream's flow. With no issuer known (endpoints
   * configured, no `issuer`, no metadata read) there is nothing to compare it with.
   */
  async checkIssuer(iss: unknown): Promise<void> {
    const { issuer, issInResponse } = await this.#metadata.endpoints();
    if (issuer === undefined || (iss === undefined && !issInResponse)) return;
    if (iss !== issuer) {
      throw new GatewayError(
        'OAUTH_REQUEST_INVALID',
        `The authorization response is not from ${this.upstream}'s authorization server (its iss does not match, ` +
          `RFC 9207)`,
      );
    }
  }

  /** /oauth/callback: the code for `pending` becomes the user's token. */
  async complete(pending: PendingAuthorization, code: string): Promise<void> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.config.redirectUri!,
      code_verifier: pending.verifier,
    });
    if (this.config.resource !== undefined) form.set('resource', this.config.resource);
    const token = await this.#tokenRequest(form);
    await this.#put(pending.principal, token);
  }

  /**
   * Forgets `principal`'s token here and, when the authorization server has an RFC 7009
   * endpoint, revokes it there (the refresh token, then the access token). Whether it was held.
   */
  async revoke(principal: string): Promise<{ held: boolean; revokedAtServer: boolean }> {
    const token = await this.#stored(principal);
    await this.store.delete(principal, this.upstream);
    if (!token) return { held: false, revokedAtServer: false };
    const { revocation } = await this.#metadata.endpoints().catch(() => ({ revocation: undefined }));
    if (revocation === undefined) return { held: true, revokedAtServer: false };
    const endpoint = new OAuthTokenEndpoint(revocation, this.config, TOKEN_TIMEOUT_MS);
    const pairs: Array<[string, string]> = [[token.accessToken, 'access_token']];
    if (token.refreshToken !== undefined) pairs.unshift([token.refreshToken, 'refresh_token']);
    let revoked = true;
    for (const [value, hint] of pairs) {
      // RFC 7009 answers 200 with an empty body: not JSON, which the endpoint reports as such.
      await endpoint.post(new URLSearchParams({ token: value, token_type_hint: hint })).catch((err: unknown) => {
        if (!(err instanceof TokenEndpointFailure && err.status === undefined && /not JSON/.test(err.message)))
          revoked = false;
      });
    }
    return { held: true, revokedAtServer: revoked };
  }

  async #stored(principal: string): Promise<StoredToken | undefined> {
    try {
      return await this.store.get(principal, this.upstream);
    } catch {
      throw new GatewayError('SESSION_STORE_UNAVAILABLE', 'The token store cannot be read right now');
    }
  }

  async #put(principal: string, token: StoredToken): Promise<void> {
    const retainUntil = token.refreshToken !== undefined ? Date.now() + REFRESH_RETENTION_MS : token.expiresAt;
    await this.store.put(principal, this.upstream, token, retainUntil);
  }

  async #elicit(principal: string, session?: string): Promise<GatewayError> {
    const state = randomBytes(32).toString('base64url');
    const elicitationId = randomUUID();
    const pending: PendingAuthorization = {
      principal,
      upstream: this.upstream,
      verifier: randomBytes(32).toString('base64url'),
      elicitationId,
      expiresAt: Date.now() + PENDING_MS,
    };
    if (session !== undefined) pending.session = session;
    await this.store.putPending(state, pending);
    const url = new URL('start', this.config.redirectUri!);
    url.search = '';
    url.searchParams.set('state', state);
    const message = `${this.upstream} acts as you: open the link to authorize it, then try again`;
    return new GatewayError('URL_ELICITATION_REQUIRED', `Upstream ${this.upstream} needs your authorization first`, {
      upstream: this.upstream,
      elicitations: [{ mode: 'url', url: url.href, elicitationId, message }],
    });
  }

  /** One refresh per user at a time here; across replicas, the loser of a rotation race reads the winner's token. */
  #refreshOnce(principal: string, token: StoredToken): Promise<string> {
    let refreshing = this.#refreshing.get(principal);
    if (!refreshing) {
      refreshing = this.#refresh(principal, token).finally(() => this.#refreshing.delete(principal));
      this.#refreshing.set(principal, refreshing);
    }
    return refreshing;
  }

  async #refresh(principal: string, token: StoredToken): Promise<string> {
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token.refreshToken! });
    if (this.config.resource !== undefined) form.set('resource', this.config.resource);
    let next: StoredToken;
    try {
      next = await this.#tokenRequest(form);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      // Another replica may have won a race to rotate it: its new token lands in the store shortly.
      for (let wait = 0; wait <= ROTATION_WAITS_MS.length; wait++) {
        const now = await this.#stored(principal);
        if (now && now.refreshToken !== token.refreshToken && Date.now() < renewAt(now))
          return `Bearer ${now.accessToken}`;
        if (!now || now.refreshToken !== token.refreshToken || wait === ROTATION_WAITS_MS.length) break;
        await new Promise((r) => setTimeout(r, ROTATION_WAITS_MS[wait]));
      }
      // The refresh token is dead (revoked, expired, used elsewhere long ago): the user grants again.
      if ((await this.#stored(principal))?.refreshToken === token.refreshToken)
        await this.store.delete(principal, this.upstream);
      throw await this.#elicit(principal);
    }
    // A server that does not rotate keeps the old refresh token good.
    await this.#put(principal, { ...next, refreshToken: next.refreshToken ?? token.refreshToken });
    return `Bearer ${next.accessToken}`;
  }

  async #tokenRequest(form: URLSearchParams): Promise<StoredToken> {
    const issuedAt = Date.now();
    let answer: unknown;
    try {
      answer = await this.#endpoint.post(form);
    } catch (err) {
      const refusal = err instanceof TokenEndpointFailure && err.status === 400 ? this.#refusal(err) : undefined;
      if (refusal) throw refusal;
      const said =
        err instanceof TokenEndpointFailure && err.status !== undefined ? `: ${(err.body ?? '').slice(0, 200)}` : '';
      throw new ExchangeFailure('connect', `token endpoint ${err instanceof Error ? err.message : String(err)}${said}`);
    }
    const body: { access_token?: unknown; token_type?: unknown; expires_in?: unknown; refresh_token?: unknown } =
      isObject(answer) ? answer : {};
    if (
      typeof body.access_token !== 'string' ||
      body.access_token === '' ||
      typeof body.token_type !== 'string' ||
      body.token_type.toLowerCase() !== 'bearer'
    ) {
      throw new ExchangeFailure('connect', 'token endpoint answered without a bearer access_token');
    }
    const lifetimeS = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_S;
    const token: StoredToken = { accessToken: body.access_token, expiresAt: issuedAt + lifetimeS * 1000, issuedAt };
    if (typeof body.refresh_token === 'string' && body.refresh_token !== '') token.refreshToken = body.refresh_token;
    return token;
  }

  /**
   * A 400 from the token endpoint (RFC 6749 5.2): invalid_grant and the like refuse this user's
   * code or refresh token; undefined for the errors that are the gateway's own (its client).
   */
  #refusal(err: TokenEndpointFailure): GatewayError | undefined {
    let code = 'invalid_request';
    let description = '';
    try {
      const body = JSON.parse(err.body ?? '') as unknown;
      if (isObject(body) && typeof body.error === 'string') code = body.error.replace(/[^\x20-\x7e]/g, '').slice(0, 64);
      if (isObject(body) && typeof body.error_description === 'string') description = body.error_description;
    } catch {
      /* not JSON: the status alone */
    }
    return GATEWAY_ERRORS.has(code) ? undefined : identityRefused(this.upstream, code, description);
  }
}

/** Refreshed ahead of expiry (10 % of its life, at most 30 s), as the other grants renew. */
function renewAt(token: StoredToken): number {
  const lifetime = token.expiresAt - (token.issuedAt ?? token.expiresAt - DEFAULT_LIFETIME_S * 1000);
  return token.expiresAt - Math.min(30_000, lifetime / 10);
}
