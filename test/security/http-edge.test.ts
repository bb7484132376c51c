/**
 * The HTTP edge of the MCP endpoint: every refusal is a JSON-RPC error body (application/json)
 * from the one error table, also where Node or a plugin would answer in its own terms: headers
 * too large (431, answered by Node before any route), OPTIONS that is not a good CORS preflight,
 * and HTTP methods the endpoint does not serve (405 with Allow, not Fastify's 404). The
 * protected resource metadata lists every scope the gateway can ask for, and the README's error
 * table says what the gateway sends. After each bad input a normal call still works and nothing
 * is left in flight.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/jsonrpc/errors.js';
import { ROOT, exampleConfig, openSession, post, startGateway, type RunningGateway } from '../support/gateway.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(exampleConfig({ security: { allowedOrigins: ['https://app.example.com'] } }));
});
afterAll(async () => {
  await gw?.stop();
});

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One request with any method and headers (fetch refuses TRACE and forbids some headers). */
function raw(method: string, path: string, headers: Record<string, string> = {}): Promise<RawReply> {
  const url = new URL(path, gw.base);
  return new Promise((resolveReply, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: url.port, method, path: url.pathname, headers: { connection: 'close', ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolveReply({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

function expectJsonRpcError(r: RawReply, status: number, code: number, type: string): void {
  expect(r.status).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(r.text) as { jsonrpc: string; id: unknown; error: { code: number; data: { type: string } } };
  expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code, data: { type } } });
}

/** A normal call from a fresh session works, and the pool holds nothing in flight. */
async function expectStillServing(): Promise<void> {
  const sid = await openSession(gw.url);
  const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'still here' } } }, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
  expect(r.json.result.content[0].text).toBe('still here');
  const ready = (await (await fetch(new URL('/readyz', gw.base))).json()) as { upstreams: Record<string, { inFlight: number }> };
  expect(ready.upstreams.echo!.inFlight).toBe(0);
}

describe('headers too large', () => {
  it('431 as a JSON-RPC error, though Node answers it before any route', async () => {
    const r = await raw('POST', '/mcp', { 'x-filler': 'a'.repeat(20_000) });
    expectJsonRpcError(r, 431, -32000, 'HEADERS_TOO_LARGE');
    await expectStillServing();
  });
});

describe('OPTIONS on the endpoint', () => {
  it('without Origin or Access-Control-Request-Method (not a preflight): 405 with Allow', async () => {
    const notPreflights: Array<Record<string, string>> = [{}, { origin: 'https://app.example.com' }, { 'access-control-request-method': 'POST' }];
    for (const headers of notPreflights) {
      const r = await raw('OPTIONS', '/mcp', headers);
      expectJsonRpcError(r, 405, -32000, 'METHOD_NOT_ALLOWED');
      expect(r.headers.allow).toBe('GET, POST, DELETE');
    }
    await expectStillServing();
  });

  it('a preflight from an origin not allowed: 403 ORIGIN_FORBIDDEN', async () => {
    const r = await raw('OPTIONS', '/mcp', { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' });
    expectJsonRpcError(r, 403, -32003, 'ORIGIN_FORBIDDEN');
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    await expectStillServing();
  });

  it('a good preflight still gets 204 with the CORS headers', async () => {
    const r = await raw('OPTIONS', '/mcp', { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-session-id' });
    expect(r.status).toBe(204);
    expect(r.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(r.headers['access-control-allow-methods']).toBe('GET, POST, DELETE');
  });
});

describe('CORS headers on a call', () => {
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'cors' } } };

  it('from an allowed origin: that origin, and the headers a page may read', async () => {
    const sid = await openSession(gw.url);
    const r = await post(gw.url, call, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18', origin: 'https://app.example.com' });
    expect(r.json.result.content[0].text).toBe('cors');
    expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(r.headers.get('access-control-expose-headers')).toBe('mcp-session-id, www-authenticate, x-request-id');
    expect(r.headers.get('vary')).toBe('Origin');
  });

  it('without Origin (not a browser): no allowed origin, still Vary: Origin for caches', async () => {
    const sid = await openSession(gw.url);
    const r = await post(gw.url, call, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    expect(r.json.result.content[0].text).toBe('cors');
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect(r.headers.get('vary')).toBe('Origin');
  });
});

describe('HTTP methods the endpoint does not serve', () => {
  // Fastify routes the first ones; the WebDAV ones it does not know at all (its 404 before).
  const methods = ['PUT', 'PATCH', 'TRACE', 'QUERY', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH', 'REPORT'];
  for (const method of methods) {
    it(`${method}: 405 METHOD_NOT_ALLOWED with Allow`, async () => {
      const r = await raw(method, '/mcp');
      expectJsonRpcError(r, 405, -32000, 'METHOD_NOT_ALLOWED');
      expect(r.headers.allow).toBe('GET, POST, DELETE');
    });
  }

  it('HEAD: 405 with Allow (a GET here opens a stream), and no body', async () => {
    const r = await raw('HEAD', '/mcp');
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, POST, DELETE');
    expect(r.text).toBe('');
  });

  it('elsewhere an unknown route stays a plain 404, and the endpoint still serves', async () => {
    expect((await raw('PROPFIND', '/elsewhere')).status).toBe(404);
    expect((await raw('GET', '/elsewhere')).status).toBe(404);
    await expectStillServing();
  });
});

describe('protected resource metadata', () => {
  let authed: RunningGateway;
  beforeAll(async () => {
    authed = await startGateway(
      exampleConfig({
        auth: {
          mode: 'jwt',
          resource: 'http://127.0.0.1/mcp',
          issuer: 'http://127.0.0.1/issuer',
          // Never fetched: this test asks only for the metadata.
          jwksUrl: 'http://127.0.0.1:9/jwks',
          authorizationServers: ['http://127.0.0.1/issuer'],
          requiredScopes: ['mcp:tools'],
          toolScopes: [
            { tools: ['echo__*'], scopes: ['mcp:echo'] },
            { tools: ['slow__sleep'], scopes: ['mcp:tools', 'mcp:slow'] },
          ],
        },
      }),
    );
  });
  afterAll(async () => {
    await authed?.stop();
  });

  it('scopes_supported lists the required scopes and every scope of auth.toolScopes, once each', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const metadata = (await (await fetch(new URL(path, authed.base))).json()) as { scopes_supported: string[] };
      expect(metadata.scopes_supported).toEqual(['mcp:tools', 'mcp:echo', 'mcp:slow']);
    }
  });
});

describe('the README error table', () => {
  /** `data.type` → [code, HTTP status] as the README's Errors section lists them. */
  function readmeRows(): Map<string, [number, number]> {
    const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Errors'), readme.indexOf('\n## ', readme.indexOf('\n## Errors') + 1));
    const rows = new Map<string, [number, number]>();
    for (const m of section.matchAll(/^\| `([A-Z_]+)` \| (-\d+) \| (\d{3}) \|/gm)) rows.set(m[1]!, [Number(m[2]), Number(m[3])]);
    return rows;
  }

  it('lists every entry of src/jsonrpc/errors.ts with its code and HTTP status, and nothing else', () => {
    const rows = readmeRows();
    const table = new Map(Object.entries(ERRORS).map(([type, e]) => [type, [e.code, e.httpStatus] as [number, number]]));
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(table));
  });
});
