/**
 * limits.maxInFlightPerClient: one client (a session, or the principal of stateless requests)
 * with that many requests in flight gets 429 -32015 for the next one at once, while other
 * clients keep being served, and gets its share back as its answers arrive. Real gateway, real
 * stdio upstreams, a real introspection endpoint for the principals, loopback.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  SLOW_SERVER,
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { heldServer, type HeldServer } from '../support/held-server.js';
import { poolStatus } from '../support/health.js';
import { statelessRequest } from '../support/stateless.js';
import { until } from '../support/wait.js';

const LIMIT = 3;
const RESOURCE = 'http://127.0.0.1/mcp';
// The calls that fill a client's share answer only when the test releases them: they are still
// in flight while the checks run however slow the machine is (a sleep of N ms only hoped so).
let held: HeldServer;
let gw: RunningGateway;
let authed: RunningGateway;
let introspection: Server;

beforeAll(async () => {
  held = heldServer();
  const upstreams = [
    stdioUpstream('echo', ECHO_SERVER),
    stdioUpstream('slow', SLOW_SERVER),
    { name: 'held', transport: 'stdio', command: held.command, args: held.args },
  ];
  gw = await startGateway(exampleConfig({ limits: { maxInFlightPerClient: LIMIT }, upstreams }));
  // Every token is good and names its own subject: the principal is the token.
  introspection = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const token = new URLSearchParams(body).get('token');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ active: true, sub: token, scope: 'mcp' }));
    });
  });
  await new Promise<void>((r) => introspection.listen(0, '127.0.0.1', r));
  authed = await startGateway(
    exampleConfig({
      limits: { maxInFlightPerClient: LIMIT },
      upstreams,
      auth: {
        mode: 'introspection',
        resource: RESOURCE,
        authorizationServers: ['http://127.0.0.1/issuer'],
        introspection: {
          url: `http://127.0.0.1:${(introspection.address() as AddressInfo).port}/introspect`,
          clientId: 'gw',
          clientSecret: 'x',
        },
      },
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
  await authed?.stop();
  await new Promise((r) => introspection?.close(r));
  held?.remove();
});

function call(
  target: RunningGateway,
  headers: Record<string, string>,
  id: number,
  name: string,
  args: Record<string, unknown>,
) {
  return post(target.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, headers);
}

const inSession = (sid: string, version = '2025-06-18') => ({ 'mcp-session-id': sid, 'mcp-protocol-version': version });

/** Starts `n` calls that hold until `key` is released, and reports when all have answered. */
function heldCalls(target: RunningGateway, headers: Record<string, string>, n: number, key: string) {
  let done = false;
  const all = Promise.all(
    Array.from({ length: n }, (_, i) => call(target, headers, 100 + i, 'held__hold', { key })),
  ).finally(() => (done = true));
  return { all, done: () => done };
}

/**
 * Until the held calls have reached the upstream, so hold their client's places: the probe
 * waits for that, not for a time, and is sent once (a probe sent while they were still on their
 * way would take a place itself and could turn one of them away).
 */
async function heldAtUpstream(target: RunningGateway, n: number): Promise<void> {
  await until(`${n} held calls at the upstream`, async () => {
    const pool = await poolStatus(target, 'held');
    return pool.inFlight + pool.queued >= n;
  });
}

describe('requests in flight per client', () => {
  it('a session at its limit gets 429 -32015 at once; another session is served meanwhile; the first gets its share back', async () => {
    const a = await openSession(gw.url);
    const b = await openSession(gw.url);
    const slow = heldCalls(gw, inSession(a), LIMIT, 'session-a');
    await heldAtUpstream(gw, LIMIT);
    const over = await call(gw, inSession(a), 1, 'echo__echo', { text: 'one too many' });
    expect(slow.done()).toBe(false);
    expect(over.status).toBe(429);
    expect(over.json.error).toMatchObject({ code: -32015, data: { retryable: true } });
    expect(over.json.error.message).toMatch(/limit 3/);

    const other = await call(gw, inSession(b), 2, 'echo__echo', { text: 'b is fine' });
    expect(slow.done()).toBe(false);
    expect(other.json.result.content[0].text).toBe('b is fine');

    held.release('session-a');
    const answers = await slow.all;
    expect(answers.map((r) => r.json.result.content[0].text)).toEqual(Array(LIMIT).fill('released session-a'));
    expect((await call(gw, inSession(a), 3, 'echo__echo', { text: 'again' })).json.result.content[0].text).toBe(
      'again',
    );
  });

  it('a batch past the limit: the requests beyond it are answered -32015 in the batch, the rest are served', async () => {
    const sid = await openSession(gw.url, '2025-03-26');
    const batch = Array.from({ length: LIMIT + 2 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'echo__echo', arguments: { text: `b${i}` } },
    }));
    const r = await post(gw.url, batch, inSession(sid, '2025-03-26'));
    expect(r.status).toBe(200);
    const byId = new Map(
      (r.json as Array<{ id: number; result?: { content: Array<{ text: string }> }; error?: { code: number } }>).map(
        (m) => [m.id, m],
      ),
    );
    for (let i = 0; i < LIMIT; i++) expect(byId.get(i)?.result?.content[0]?.text).toBe(`b${i}`);
    for (let i = LIMIT; i < LIMIT + 2; i++) expect(byId.get(i)?.error?.code).toBe(-32015);
  });

  it('a failed call frees its place too (a tool error, a JSON-RPC error)', async () => {
    const sid = await openSession(gw.url);
    for (let i = 0; i < LIMIT + 1; i++)
      expect((await call(gw, inSession(sid), i, 'slow__fail', {})).json.result.isError).toBe(true);
    for (let i = 0; i < LIMIT + 1; i++)
      expect((await call(gw, inSession(sid), i, 'echo__no_such_tool', {})).json.error.code).toBeTypeOf('number');
    expect(
      (await call(gw, inSession(sid), 99, 'echo__echo', { text: 'still allowed' })).json.result.content[0].text,
    ).toBe('still allowed');
  });

  it('stateless requests are counted per principal: alice at her limit gets 429, bob is served', async () => {
    const stateless = (token: string, id: number, name: string, args: Record<string, unknown>) => {
      const { body, headers } = statelessRequest(id, 'tools/call', { name, arguments: args });
      return post(authed.url, body, { authorization: `Bearer ${token}`, ...headers });
    };
    let done = false;
    const slow = Promise.all(
      Array.from({ length: LIMIT }, (_, i) => stateless('alice', 10 + i, 'held__hold', { key: 'alice' })),
    ).finally(() => (done = true));
    await heldAtUpstream(authed, LIMIT);
    const over = await stateless('alice', 1, 'echo__echo', { text: 'x' });
    expect(done).toBe(false);
    expect(over.status).toBe(429);
    expect(over.json.error.code).toBe(-32015);
    expect((await stateless('bob', 2, 'echo__echo', { text: 'bob' })).json.result.content[0].text).toBe('bob');
    expect(done).toBe(false);
    held.release('alice');
    expect((await slow).every((r) => r.status === 200)).toBe(true);
    expect((await stateless('alice', 3, 'echo__echo', { text: 'back' })).json.result.content[0].text).toBe('back');
  });

  it('counts rejections in mcpgw_transport_rejections_total', async () => {
    const text = await (await fetch(new URL('/metrics', gw.base))).text();
    expect(text).toMatch(/mcpgw_transport_rejections_total\{error_type="CLIENT_TOO_MANY_IN_FLIGHT"\} [1-9]/);
  });
});
