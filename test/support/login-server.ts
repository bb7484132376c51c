/**
 * The browser side of the gateway's own authorization server, for auth.browserLogin tests: GET
 * /authorize signs in whoever the "browser" names in x-test-user (a code bound to its PKCE
 * challenge, sent back to redirect_uri), and POST /token redeems the code, once, for an access
 * token the test's JWT issuer signs for that user (so the gateway's authenticator accepts it).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { JwtIssuer } from './jwt-issuer.js';

export function startLoginServer(issuer: JwtIssuer, forms: URLSearchParams[] = []): Promise<Server> {
  const codes = new Map<string, { user: string; challenge: string }>();
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const code = randomBytes(16).toString('hex');
      codes.set(code, { user: String(req.headers['x-test-user']), challenge: url.searchParams.get('code_challenge')! });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state')!);
      return void res.writeHead(302, { location: back.href }).end();
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', async () => {
      const form = new URLSearchParams(body);
      forms.push(form);
      const issued = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (
        !issued ||
        createHash('sha256')
          .update(form.get('code_verifier') ?? '')
          .digest('base64url') !== issued.challenge
      ) {
        return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
      }
      const { authorization } = await issuer.bearer(issued.user);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: authorization.slice(7), token_type: 'Bearer', expires_in: 300 }));
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}
