import type { OAuthClientConfig } from '../config/schema.js';
import { isObject } from '../jsonrpc/messages.js';
import { OAuthTokenEndpoint, TokenEndpointFailure } from './oauth-token-endpoint.js';
import { ExchangeFailure } from '../contracts/exchange-failure.js';

/** A token whose lifetime the server did not say is renewed this often. */
const DEFAULT_LIFETIME_S = 300;
const TOKEN_TIMEOUT_MS = 10_000;

/**
 * The gateway's own access token for one remote upstream, from an OAuth 2.1 authorization
 * server by the client credentials grant (client_secret_basic, with `scope` and the RFC 8707
 * `resource`). Fetched on first use, shared by every worker of the upstream, renewed shortly
 * before it expires, one fetch at a time. A failure is an ExchangeFailure of kind `connect`:
 * the upstream was never asked, so it is as down as if it could not be reached.
 */
export class ClientCredentials {
  #current: { authorization: string; renewAt: number } | undefined;
  #fetching: Promise<string> | undefined;
  readonly #endpoint: OAuthTokenEndpoint;

  constructor(private readonly config: OAuthClientConfig) {
    this.#endpoint = new OAuthTokenEndpoint(config.tokenUrl, config, TOKEN_TIMEOUT_MS);
  }

  /** The Authorization header value to send now. */
  authorization(): Promise<string> {
    const current = this.#current;
    if (current && Date.now() < current.renewAt) return Promise.resolve(current.authorization);
    this.#fetching ??= this.#fetch().finally(() => (this.#fetching = undefined));
    return this.#fetching;
  }

  /** The upstream refused `authorization` (revoked, keys rotated): the next call fetches a new token. */
  invalidate(authorization: string): void {
    if (this.#current?.authorization === authorization) this.#current = undefined;
  }

  async #fetch(): Promise<string> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (this.config.scopes.length > 0) form.set('scope', this.config.scopes.join(' '));
    if (this.config.resource !== undefined) form.set('resource', this.config.resource);
    const started = Date.now();
    let answer: unknown;
    try {
      answer = await this.#endpoint.post(form);
    } catch (err) {
      throw new ExchangeFailure('connect', `token endpoint ${describe(err)}`);
    }
    const body: { access_token?: unknown; token_type?: unknown; expires_in?: unknown } = isObject(answer) ? answer : {};
    if (typeof body.access_token !== 'string' || body.access_token === '')
      throw new ExchangeFailure('connect', 'token endpoint answered without an access_token');
    if (typeof body.token_type !== 'string' || body.token_type.toLowerCase() !== 'bearer')
      throw new ExchangeFailure(
        'connect',
        `token endpoint issued a token_type the gateway cannot send: ${String(body.token_type)}`,
      );
    const lifetimeMs =
      (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_S) * 1000;
    // Renewed ahead of expiry (10 % of its life, at most 30 s): a call must not leave with a token that dies on the
    // way.
    const authorization = `Bearer ${body.access_token}`;
    this.#current = { authorization, renewAt: started + lifetimeMs - Math.min(30_000, lifetimeMs / 10) };
    return authorization;
  }
}

/** The error body (RFC 6749 5.2) says why, e.g. invalid_client: worth the operator's eyes. */
function describe(err: unknown): string {
  if (err instanceof TokenEndpointFailure && err.status !== undefined)
    return `${err.message}: ${(err.body ?? '').slice(0, 200)}`;
  return err instanceof Error ? err.message : String(err);
}
