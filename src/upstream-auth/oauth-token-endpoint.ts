import { request } from 'undici';

/**
 * Why an authorization server's endpoint gave no usable answer. The message reads after the
 * endpoint's name ("… cannot be reached: …", "… answered HTTP 401"); `body` is what it said
 * with an error status (RFC 6749 5.2: e.g. invalid_client, worth the operator's eyes).
 */
export class TokenEndpointFailure extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: string,
  ) {
    super(message);
    this.name = 'TokenEndpointFailure';
  }
}

/**
 * One POST endpoint of an OAuth 2.1 authorization server that the gateway calls as a client
 * authenticated with HTTP Basic (client_secret_basic): the token endpoint (client credentials
 * grant, for upstreams) and the RFC 7662 introspection endpoint (for the gateway's own clients).
 * It sends a form and gets the JSON answered with HTTP 200; what that JSON must hold is the
 * caller's business.
 */
export class OAuthTokenEndpoint {
  readonly #authorization: string;

  constructor(
    readonly url: string,
    client: { clientId: string; clientSecret: string },
    private readonly timeoutMs: number,
  ) {
    // RFC 6749 2.3.1: both halves are form-encoded before they are joined.
    const pair = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
    this.#authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  }

  /** POSTs `form`; resolves with the parsed JSON of a 200 answer, rejects with a TokenEndpointFailure. */
  async post(form: URLSearchParams): Promise<unknown> {
    let status: number;
    let text: string;
    try {
      const res = await request(this.url, {
        method: 'POST',
        headers: {
          authorization: this.#authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      throw new TokenEndpointFailure(`cannot be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (status !== 200) throw new TokenEndpointFailure(`answered HTTP ${status}`, status, text);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new TokenEndpointFailure('answered something that is not JSON');
    }
  }
}
