/**
 * A small OAuth authorization server on loopback for identity tests: a token endpoint with the
 * client credentials grant (the gateway's own token) and the RFC 8693 token exchange (a user's
 * token for an upstream's). It counts exchanges per subject, can refuse given subjects, and
 * knows which tokens it issued are live, so an upstream in front of it can check them.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
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
  };
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(TEST_CLIENT.id)}:${encodeURIComponent(TEST_CLIENT.secret)}`).toString('base64')}`;
  const server: Server = createServer(async (req, res) => {
    const form = new URLSearchParams(await readBody(req));
    state.forms.push(form);
    const json = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.headers.authorization !== basic) return json(401, { error: 'invalid_client' });
    const grant = form.get('grant_type');
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
      if (state.refuse.has(sub)) return json(400, { error: 'invalid_grant', error_description: `${sub} may not use this upstream` });
      subject = sub;
    } else return json(400, { error: 'unsupported_grant_type' });
    const token = `${subject === 'gateway' ? 'gw' : `ex-${subject}`}-${++issued}`;
    state.live.set(token, subject);
    const issuedType = grant === 'client_credentials' ? {} : { issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' };
    json(200, { access_token: token, token_type: 'Bearer', expires_in: state.expiresIn, ...issuedType });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(state, {
    tokenUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`,
    revoke: (token: string) => void state.live.delete(token),
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}
