/**
 * A small OAuth authorization server on loopback for identity tests: a token endpoint with the
 * client credentials grant (the gateway's own token) and the RFC 8693 token exchange (a user's
 * token for an upstream's). It counts exchanges per subject, can refuse given subjects, and
 * knows which tokens it issued are live, so an upstream in front of it can check them.
 *
 * And the authorization code grant (OAuth 2.1: PKCE S256 required, exact redirect_uri, codes
 * good once), refresh tokens that rotate (a used one is dead), RFC 7009 revocation and RFC 8414
 * metadata. Consent is auto-approved for the user the "browser" names in an `x-test-user`
 * header on GET /authorize (a user in `deny` is answered access_denied).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';

export const TEST_CLIENT = { id: 'mcp-gateway', secret: 'gw/s3cret' };

export interface AuthorizationServer {
  tokenUrl: string;
  /** Token-exchange requests per subject (the `sub` of the subject_token), refused ones included. */
  exchanges: Map<string, number>;
  /** Every form posted, in order. */
  forms: URLSearchParams[];
  /** Subjects whose exchanges are refused (invalid_grant). */
  refuse: Set<string>;
  /** Lifetime of the tokens it issues from now on. */
  expiresIn: number;
  /** Issued and not revoked: token → the subject it acts for ("gateway" for client credentials). */
  live: Map<string, string>;
  revoke(token: string): void;
  close(): Promise<void>;
  /** The issuer (RFC 8414 metadata at its /.well-known/oauth-authorization-server). */
  issuer: string;
  /** Users whose consent is refused (access_denied on /authorize). */
  deny: Set<string>;
  /** Live refresh tokens → their user. */
  refreshTokens: Map<string, string>;
  /** Per user: codes redeemed, refreshes made. */
  codes: Map<string, number>;
  refreshes: Map<string, number>;
  /** Tokens posted to /revoke, in order. */
  revoked: string[];
  /** How long a granted refresh takes to answer (a refused one answers at once): lets a test make two refreshes race. */
  refreshDelayMs: number;
  /** Refresh requests refused (a used, revoked or unknown refresh token). */
  refusedRefreshes: number;
}

interface IssuedCode {
  user: string;
  challenge: string;
  redirectUri: string;
  resource: string | null;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => resolve(body));
  });
}

export async function startAuthorizationServer(): Promise<AuthorizationServer> {
  let issued = 0;
  const state = {
    exchanges: new Map<string, number>(),
    forms: [] as URLSearchParams[],
    refuse: new Set<string>(),
    expiresIn: 3600,
    live: new Map<string, string>(),
    deny: new Set<string>(),
    refreshTokens: new Map<string, string>(),
    codes: new Map<string, number>(),
    refreshes: new Map<string, number>(),
    revoked: [] as string[],
    refreshDelayMs: 0,
    refusedRefreshes: 0,
  };
  const issuedCodes = new Map<string, IssuedCode>();
  let issuer = '';
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  /** A user's access and refresh tokens, both live until revoked (or, the refresh token, used). */
  const userTokens = (user: string) => {
    const n = ++issued;
    const access = `uc-${user}-${n}`;
    const refresh = `rt-${user}-${n}`;
    state.live.set(access, user);
    state.refreshTokens.set(refresh, user);
    return { access_token: access, token_type: 'Bearer', expires_in: state.expiresIn, refresh_token: refresh };
  };
  const authorize = (req: IncomingMessage, res: ServerResponse) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const redirect = q.get('redirect_uri') ?? '';
    // Nothing is redirected to an unchecked place: a bad client or redirect_uri is a page of its own.
    if (q.get('client_id') !== TEST_CLIENT.id || !/^http:\/\/127\.0\.0\.1:\d+\//.test(redirect))
      return void res.writeHead(400).end('bad client_id or redirect_uri');
    const back = (params: Record<string, string>) => {
      const to = new URL(redirect);
      for (const [k, v] of Object.entries({ ...params, state: q.get('state') ?? '' })) to.searchParams.set(k, v);
      res.writeHead(302, { location: to.href }).end();
    };
    if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))
      return back({ error: 'invalid_request' });
    const user = String(req.headers['x-test-user'] ?? '');
    if (user === '' || state.deny.has(user))
      return back({ error: 'access_denied', error_description: 'the user said no <b>' });
    const code = `code-${++issued}-${Math.random().toString(36).slice(2)}`;
    issuedCodes.set(code, {
      user,
      challenge: q.get('code_challenge')!,
      redirectUri: redirect,
      resource: q.get('resource'),
    });
    back({ code });
  };
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(TEST_CLIENT.id)}:${encodeURIComponent(TEST_CLIENT.secret)}`).toString('base64')}`;
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const json = (status: number, body: unknown) =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && path === '/authorize') return authorize(req, res);
    if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        revocation_endpoint: `${issuer}/revoke`,
        code_challenge_methods_supported: ['S256'],
      });
    }
    const form = new URLSearchParams(await readBody(req));
    state.forms.push(form);
    if (req.headers.authorization !== basic) return json(401, { error: 'invalid_client' });
    if (path === '/revoke') {
      const token = form.get('token') ?? '';
      state.revoked.push(token);
      state.live.delete(token);
      state.refreshTokens.delete(token);
      return void res.writeHead(200).end();
    }
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      const code = issuedCodes.get(form.get('code') ?? '');
      issuedCodes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      if (
        !code ||
        code.redirectUri !== form.get('redirect_uri') ||
        createHash('sha256').update(verifier).digest('base64url') !== code.challenge
      ) {
        return json(400, {
          error: 'invalid_grant',
          error_description: 'code unknown, used, or not for this verifier and redirect_uri',
        });
      }
      bump(state.codes, code.user);
      return json(200, userTokens(code.user));
    }
    if (grant === 'refresh_token') {
      const rt = form.get('refresh_token') ?? '';
      const user = state.refreshTokens.get(rt);
      // Rotation: a refresh token works once.
      state.refreshTokens.delete(rt);
      if (user !== undefined) bump(state.refreshes, user);
      else state.refusedRefreshes++;
      const answer = user === undefined ? undefined : userTokens(user);
      if (!answer)
        return json(400, { error: 'invalid_grant', error_description: 'refresh token unknown, used or revoked' });
      if (state.refreshDelayMs > 0) await new Promise((r) => setTimeout(r, state.refreshDelayMs));
      return json(200, answer);
    }
    let subject: string;
    if (grant === 'client_credentials') subject = 'gateway';
    else if (grant === 'urn:ietf:params:oauth:grant-type:token-exchange') {
      let sub: unknown;
      try {
        sub = decodeJwt(form.get('subject_token') ?? '').sub;
      } catch {
        return json(400, { error: 'invalid_request', error_description: 'subject_token is not a JWT' });
      }
      if (typeof sub !== 'string') return json(400, { error: 'invalid_grant' });
      state.exchanges.set(sub, (state.exchanges.get(sub) ?? 0) + 1);
      if (state.refuse.has(sub))
        return json(400, { error: 'invalid_grant', error_description: `${sub} may not use this upstream` });
      subject = sub;
    } else return json(400, { error: 'unsupported_grant_type' });
    const token = `${subject === 'gateway' ? 'gw' : `ex-${subject}`}-${++issued}`;
    state.live.set(token, subject);
    const issuedType =
      grant === 'client_credentials' ? {} : { issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' };
    json(200, { access_token: token, token_type: 'Bearer', expires_in: state.expiresIn, ...issuedType });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    issuer,
    tokenUrl: `${issuer}/token`,
    revoke: (token: string) => void state.live.delete(token),
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}
