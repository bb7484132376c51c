import { request } from 'undici';
import type { OAuthClientConfig } from '../config/schema.js';
import { isObject } from '../jsonrpc/messages.js';
import { ExchangeFailure } from '../contracts/exchange-failure.js';

const METADATA_TIMEOUT_MS = 10_000;

/** The authorization server's endpoints the authorization code grant uses besides the token endpoint. */
export interface UserGrantEndpoints {
  authorization: string;
  /** RFC 7009; undefined: the server names none, so revocation is the gateway forgetting the token. */
  revocation: string | undefined;
  /** RFC 9207: the issuer an authorization response's `iss` must name (the metadata's, else the configured one). */
  issuer: string | undefined;
  /** RFC 9207: the metadata says every authorization response carries `iss`. */
  issInResponse: boolean;
}

/**
 * The endpoints as configured, or, for what is missing, from the authorization server's RFC 8414
 * metadata (`/.well-known/oauth-authorization-server`, then OpenID Connect's
 * `/.well-known/openid-configuration`) at `issuer`, or at the tokenUrl's origin. Read once; a
 * failed read is tried again on the next use.
 */
export class UserGrantMetadata {
  #read: Promise<UserGrantEndpoints> | undefined;

  constructor(private readonly config: OAuthClientConfig) {}

  endpoints(): Promise<UserGrantEndpoints> {
    const { authorizationUrl, revocationUrl } = this.config;
    if (authorizationUrl !== undefined && (revocationUrl !== undefined || this.config.issuer === undefined)) {
      return Promise.resolve({
        authorization: authorizationUrl,
        revocation: revocationUrl,
        issuer: this.config.issuer,
        issInResponse: false,
      });
    }
    this.#read ??= this.#discover().catch((err: unknown) => {
      this.#read = undefined;
      throw err;
    });
    return this.#read;
  }

  async #discover(): Promise<UserGrantEndpoints> {
    const issuer = new URL(this.config.issuer ?? new URL(this.config.tokenUrl).origin);
    const path = issuer.pathname === '/' ? '' : issuer.pathname.replace(/\/$/, '');
    const candidates = [
      `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
      `${issuer.origin}${path}/.well-known/openid-configuration`,
    ];
    for (const url of candidates) {
      const metadata = await readJson(url);
      if (!metadata) continue;
      const authorization = this.config.authorizationUrl ?? stringField(metadata, 'authorization_endpoint');
      if (authorization === undefined) continue;
      return {
        authorization,
        revocation: this.config.revocationUrl ?? stringField(metadata, 'revocation_endpoint'),
        issuer: stringField(metadata, 'issuer') ?? this.config.issuer,
        issInResponse: metadata.authorization_response_iss_parameter_supported === true,
      };
    }
    throw new ExchangeFailure(
      'connect',
      `authorization server metadata at ${issuer.origin} names no authorization_endpoint (RFC 8414)`,
    );
  }
}

async function readJson(url: string): Promise<Record<string, unknown> | undefined> {
  try {
    const res = await request(url, {
      headers: { accept: 'application/json' },
      headersTimeout: METADATA_TIMEOUT_MS,
      bodyTimeout: METADATA_TIMEOUT_MS,
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    const body = (await res.body.json()) as unknown;
    return isObject(body) ? body : undefined;
  } catch {
    return undefined;
  }
}

/** Only http(s) URLs: a metadata document must not send browsers to javascript: or the like. */
function stringField(metadata: Record<string, unknown>, key: string): string | undefined {
  const value = metadata[key];
  return typeof value === 'string' && /^https?:\/\//.test(value) ? value : undefined;
}
