/**
 * The HTTP edge of the gateway: every refusal is a JSON-RPC error body (application/json) from
 * the one error table, also where Node, Fastify or a plugin would answer in its own terms: headers
 * too large (431, answered by Node before any route), OPTIONS that is not a good CORS preflight,
 * HTTP methods the endpoint does not serve (405 with Allow, not Fastify's 404), paths and methods
 * no route serves (404, on any path), bodies and URLs Fastify cannot parse, WebSocket handshakes
 * ws refuses. A sweep over paths × methods × bodies shows none of their own shapes is left. The
 * protected resource metadata lists every scope the gateway can ask for, and the error table of
 * docs/limits-and-errors.md says what the gateway sends. After each bad input a normal call
 * still works and nothing is left in flight.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, type ErrorName } from '../../src/jsonrpc/errors.js';
import { ROOT, exampleConfig, openSession, post, startGateway, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      security: { allowedOrigins: ['https://app.example.com'] },
      servers: [{ path: '/mcp/reader', tools: ['echo__*'] }],
    }),
  );
});
afterAll(async () => {
  await gw?.stop();
});

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * One request with any method, path (sent as given), headers and body (fetch refuses TRACE and
 * forbids some headers). An SSE reply is cut after its head; an upgrade that succeeds is a 101.
 */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawReply> {
  const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolveReply, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: new URL(gw.base).port,
        method,
        path,
        agent: false,
        headers: { connection: 'close', ...length, ...headers },
      },
      (res) => {
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          res.destroy();
          return resolveReply({ status: res.statusCode!, headers: res.headers, text: '' });
        }
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolveReply({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolveReply({ status: res.statusCode!, headers: res.headers, text: '' });
    });
    req.on('error', reject);
    req.end(body);
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
  const r = await post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'still here' } } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
  expect(r.json.result.content[0].text).toBe('still here');
  const ready = (await (await fetch(new URL('/readyz', gw.base))).json()) as {
    upstreams: Record<string, { inFlight: number }>;
  };
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
    const notPreflights: Array<Record<string, string>> = [
      {},
      { origin: 'https://app.example.com' },
      { 'access-control-request-method': 'POST' },
    ];
    for (const headers of notPreflights) {
      const r = await raw('OPTIONS', '/mcp', headers);
      expectJsonRpcError(r, 405, -32000, 'METHOD_NOT_ALLOWED');
      expect(r.headers.allow).toBe('GET, POST, DELETE');
    }
    await expectStillServing();
  });

  it('a preflight from an origin not allowed: 403 ORIGIN_FORBIDDEN', async () => {
    const r = await raw('OPTIONS', '/mcp', {
      origin: 'https://evil.example.com',
      'access-control-request-method': 'POST',
    });
    expectJsonRpcError(r, 403, -32003, 'ORIGIN_FORBIDDEN');
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    await expectStillServing();
  });

  it('a good preflight still gets 204 with the CORS headers', async () => {
    const r = await raw('OPTIONS', '/mcp', {
      origin: 'https://app.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, mcp-session-id',
    });
    expect(r.status).toBe(204);
    expect(r.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(r.headers['access-control-allow-methods']).toBe('GET, POST, DELETE');
  });
});

describe('CORS headers on a call', () => {
  const call = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo__echo', arguments: { text: 'cors' } },
  };

  it('from an allowed origin: that origin, and the headers a page may read', async () => {
    const sid = await openSession(gw.url);
    const r = await post(gw.url, call, {
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-06-18',
      origin: 'https://app.example.com',
    });
    expect(r.json.result.content[0].text).toBe('cors');
    expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(r.headers.get('access-control-expose-headers')).toBe('mcp-session-id, www-authenticate, x-request-id, etag');
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
  const methods = [
    'PUT',
    'PATCH',
    'TRACE',
    'QUERY',
    'PROPFIND',
    'PROPPATCH',
    'MKCOL',
    'COPY',
    'MOVE',
    'LOCK',
    'UNLOCK',
    'SEARCH',
    'REPORT',
  ];
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

  it('elsewhere an unknown route is 404 ROUTE_NOT_FOUND, and the endpoint still serves', async () => {
    expectJsonRpcError(await raw('PROPFIND', '/elsewhere'), 404, -32000, 'ROUTE_NOT_FOUND');
    expectJsonRpcError(await raw('GET', '/elsewhere'), 404, -32000, 'ROUTE_NOT_FOUND');
    await expectStillServing();
  });

  it("a virtual server's endpoint refuses them as the main one does", async () => {
    for (const method of ['PUT', 'PROPFIND']) {
      const r = await raw(method, '/mcp/reader');
      expectJsonRpcError(r, 405, -32000, 'METHOD_NOT_ALLOWED');
      expect(r.headers.allow).toBe('GET, POST, DELETE');
    }
    expectJsonRpcError(await raw('OPTIONS', '/mcp/reader'), 405, -32000, 'METHOD_NOT_ALLOWED');
    expectJsonRpcError(
      await raw('OPTIONS', '/mcp/reader', {
        origin: 'https://evil.example.com',
        'access-control-request-method': 'POST',
      }),
      403,
      -32003,
      'ORIGIN_FORBIDDEN',
    );
  });
});

describe('GET /: a pointer for newcomers', () => {
  it('200 text/plain naming the MCP endpoints, /status, /healthz, /readyz, /metrics and the README; other methods on / stay 404', async () => {
    const r = await raw('GET', '/');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    for (const part of [
      'MCP endpoint (Streamable HTTP, POST/GET/DELETE): /mcp',
      'virtual servers: /mcp/reader',
      'legacy HTTP+SSE: /sse',
      'WebSocket: /ws',
      '/status',
      '/healthz',
      '/readyz',
      '/metrics',
      'README',
    ]) {
      expect(r.text).toContain(part);
    }
    const head = await raw('HEAD', '/');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    for (const method of ['POST', 'DELETE', 'PUT'])
      expectJsonRpcError(
        await raw(method, '/', { 'content-type': 'application/json' }, '{}'),
        404,
        -32000,
        'ROUTE_NOT_FOUND',
      );
    expectJsonRpcError(await raw('GET', '/index.html'), 404, -32000, 'ROUTE_NOT_FOUND');
    await expectStillServing();
  });
});

describe('what no route serves, and what Fastify cannot parse', () => {
  const json = { 'content-type': 'application/json' };

  it('a path or method without a route: 404 ROUTE_NOT_FOUND, whatever the body, which is not read', async () => {
    const cases: Array<[string, string, Record<string, string>, string | undefined]> = [
      ['POST', '/ws', {}, undefined],
      ['POST', '/ws', json, ''],
      ['GET', '/mcp/reader/ws', {}, undefined],
      ['PUT', '/mcp/', json, ''],
      ['POST', '/MCP', json, '{}'],
      ['OPTIONS', '/MCP', {}, undefined],
      ['OPTIONS', '/healthz', {}, undefined],
      ['POST', '/healthz', json, '{'],
      ['QUERY', '/elsewhere', {}, undefined],
      // Past limits.bodyBytes: still 404, not 413 (the body was never read).
      ['POST', '/elsewhere', json, 'x'.repeat(4 * 1024 * 1024 + 1)],
    ];
    for (const [method, path, headers, body] of cases) {
      const r = await raw(method, path, headers, body);
      expectJsonRpcError(r, 404, -32000, 'ROUTE_NOT_FOUND');
      expect(JSON.parse(r.text).error.message).toBe(`Not Found: no route for ${method} ${JSON.stringify(path)}`);
    }
    await expectStillServing();
  });

  it('a preflight from an origin not allowed is 403 on any path; an allowed one still 204', async () => {
    expectJsonRpcError(
      await raw('OPTIONS', '/MCP', { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' }),
      403,
      -32003,
      'ORIGIN_FORBIDDEN',
    );
    expect(
      (
        await raw('OPTIONS', '/.well-known/oauth-protected-resource', {
          origin: 'https://app.example.com',
          'access-control-request-method': 'GET',
        })
      ).status,
    ).toBe(204);
  });

  it('an empty or bad JSON body on a route Fastify parses it for: 400 PARSE_ERROR; a URL it cannot decode: 400 INVALID_REQUEST', async () => {
    const empty = await raw('DELETE', '/oauth/tokens/x', json, '');
    expectJsonRpcError(empty, 400, -32700, 'PARSE_ERROR');
    expect(JSON.parse(empty.text).error.message).toBe(
      'Parse error: Content-Type is application/json but the body is empty',
    );
    expectJsonRpcError(await raw('DELETE', '/oauth/tokens/x', json, '{'), 400, -32700, 'PARSE_ERROR');
    expectJsonRpcError(await raw('POST', '/oauth/start', json, ''), 400, -32700, 'PARSE_ERROR');
    // Without a body the route answers for itself (auth is off: no token is held for anyone).
    expectJsonRpcError(await raw('DELETE', '/oauth/tokens/x'), 400, -32602, 'OAUTH_REQUEST_INVALID');
    for (const [method, path] of [
      ['GET', '/%'],
      ['POST', '/mcp/%zz'],
      ['DELETE', `/oauth/tokens/${'x'.repeat(101)}`],
    ])
      expectJsonRpcError(await raw(method!, path!), 400, -32600, 'INVALID_REQUEST');
    await expectStillServing();
  });

  it('a WebSocket upgrade ws refuses: 400 INVALID_REQUEST, no session left; a good one still upgrades', async () => {
    const upgrade = {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    const sessions = async () =>
      Number(/^mcpgw_sessions_active (\d+)$/m.exec(await (await fetch(new URL('/metrics', gw.base))).text())?.[1]);
    const before = await sessions();
    for (const headers of [
      { ...upgrade, 'sec-websocket-key': 'short' },
      { ...upgrade, 'sec-websocket-version': '12' },
      { connection: 'Upgrade', upgrade: 'websocket' },
    ]) {
      const r = await raw('GET', '/ws', headers);
      expectJsonRpcError(r, 400, -32600, 'INVALID_REQUEST');
      expect(JSON.parse(r.text).error.message).toMatch(
        /^Invalid Request: not a WebSocket handshake this endpoint takes \(Missing or invalid Sec-WebSocket-(Key|Version) header\)$/,
      );
    }
    expect((await raw('GET', '/ws', upgrade)).status).toBe(101);
    await until('the sessions of the handshakes to be gone', async () => (await sessions()) === before);
    await expectStillServing();
  });

  it('a sweep of paths × methods × bodies: every reply of 400 or more is an error of the table, nothing left open', async () => {
    const paths = [
      '/',
      '/mcp',
      '/MCP',
      '/mcp/',
      '/Mcp',
      '/mcp/reader',
      '/mcp/reader/',
      '/MCP/READER',
      '/mcp/reader/ws',
      '/mcp/reader/sse',
      '/ws',
      '/WS',
      '/sse',
      '/messages',
      '/healthz',
      '/readyz',
      '/metrics',
      '/status',
      '/status.json',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/oauth/start',
      '/oauth/callback',
      '/oauth/tokens/x',
      '/oauth/tokens/',
      '/oauth/login/callback',
      '/elsewhere',
      '//mcp',
      '/mcp?x=%',
      '/%',
      '/mcp/%zz',
      '/%2e%2e/mcp',
    ];
    const bodies: Array<[Record<string, string>, string | undefined]> = [
      [{}, undefined],
      [json, ''],
      [json, '{'],
      [json, '{}'],
      [{ 'content-type': 'text/plain' }, 'x'],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, 'state=x'],
      [{ 'content-type': 'application/octet-stream' }, '\u0000\u00ff'],
    ];
    const preflights: Array<Record<string, string>> = [
      {},
      { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
    ];
    const cases: Array<[string, string, Record<string, string>, string | undefined]> = [];
    for (const path of paths) {
      for (const method of ['GET', 'HEAD', 'TRACE']) cases.push([method, path, {}, undefined]);
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'QUERY', 'PROPFIND', 'SEARCH'])
        for (const [headers, body] of bodies) cases.push([method, path, headers, body]);
      for (const headers of preflights)
        for (const [more, body] of bodies) cases.push(['OPTIONS', path, { ...headers, ...more }, body]);
    }
    const sessions = async () =>
      Number(/^mcpgw_sessions_active (\d+)$/m.exec(await (await fetch(new URL('/metrics', gw.base))).text())?.[1]);
    const before = await sessions();
    const statuses = new Map<number, number>();
    for (let i = 0; i < cases.length; i += 8) {
      await Promise.all(
        cases.slice(i, i + 8).map(async ([method, path, headers, body]) => {
          const r = await raw(method, path, headers, body);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          expectGatewayReply(`${method} ${path} ${JSON.stringify(headers)} ${body ?? ''}`, method, r);
        }),
      );
    }
    // Every kind of answer came up: successes, the endpoints' refusals and the routes no one serves.
    expect(cases.length).toBeGreaterThan(2000);
    for (const status of [200, 204, 400, 404, 405, 406, 415, 426])
      expect(statuses.get(status), `HTTP ${status}`).toBeGreaterThan(0);
    await until(
      'the streams the sweep opened to close, and their sessions to end',
      async () => {
        const metrics = await (await fetch(new URL('/metrics', gw.base))).text();
        return !/^mcpgw_sse_streams_open\{[^}]*\} [1-9]/m.test(metrics) && (await sessions()) === before;
      },
      15_000,
    );
    await expectStillServing();
  });
});

/** A reply the gateway itself wrote: below 400 anything; else an error of the table, as JSON (or, for a person, the /oauth pages' HTML naming it). */
function expectGatewayReply(what: string, method: string, r: RawReply): void {
  if (r.status < 400) return;
  const contentType = String(r.headers['content-type']);
  if (contentType.startsWith('text/html')) {
    expect(what).toMatch(/^\w+ \/oauth\//);
    if (method === 'HEAD') return;
    const type = /<small>([A-Z_]+)<\/small>/.exec(r.text)?.[1] as ErrorName | undefined;
    expect(Object.keys(ERRORS), what).toContain(type);
    expect(r.status, what).toBe(ERRORS[type!].httpStatus === 200 ? 502 : ERRORS[type!].httpStatus);
    return;
  }
  expect(contentType, what).toMatch(/^application\/json/);
  if (method === 'HEAD') return;
  const body = JSON.parse(r.text) as { jsonrpc: string; error: { code: number; data: { type: ErrorName } } };
  expect(body.jsonrpc, what).toBe('2.0');
  expect(Object.keys(ERRORS), `${what}: ${r.text}`).toContain(body.error.data.type);
  expect(body.error.code, what).toBe(ERRORS[body.error.data.type].code);
  expect(r.status, what).toBe(ERRORS[body.error.data.type].httpStatus);
}

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

describe('the error table of docs/limits-and-errors.md', () => {
  /** `data.type` → [code, HTTP status] as the Errors section of docs/limits-and-errors.md lists them. */
  function tableRows(): Map<string, [number, number]> {
    const page = readFileSync(resolve(ROOT, 'docs/limits-and-errors.md'), 'utf8');
    const start = page.indexOf('\n## Errors');
    expect(start).toBeGreaterThan(-1);
    const next = page.indexOf('\n## ', start + 1);
    const section = page.slice(start, next === -1 ? undefined : next);
    const rows = new Map<string, [number, number]>();
    for (const m of section.matchAll(/^\| `([A-Z_]+)` \| (-\d+) \| (\d{3}) \|/gm))
      rows.set(m[1]!, [Number(m[2]), Number(m[3])]);
    return rows;
  }

  it('lists every entry of src/jsonrpc/errors.ts with its code and HTTP status, and nothing else', () => {
    const rows = tableRows();
    const table = new Map(
      Object.entries(ERRORS).map(([type, e]) => [type, [e.code, e.httpStatus] as [number, number]]),
    );
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(table));
  });
});
