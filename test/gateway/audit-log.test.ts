/**
 * `audit.methods`: one log line per audited request, with who asked (principal, session), what
 * (method, tool or URI), how it ended and how long it took, and never the arguments or results.
 * A real gateway with its log captured, real stdio upstreams, a real introspection endpoint for
 * principals, loopback.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Gateway } from '../../src/app.js';
import { ECHO_SERVER, SLOW_SERVER, exampleConfig, post, stdioUpstream } from '../support/gateway.js';
import { statelessRequest } from '../support/stateless.js';
import { capturingLogger } from '../support/log-lines.js';

const SECRET = 'do-not-log-me-7f3a';
const lines: Array<Record<string, unknown>> = [];
let introspection: Server;
let gateway: Gateway;
let url: URL;

beforeAll(async () => {
  introspection = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ active: true, sub: new URLSearchParams(body).get('token'), iss: 'http://127.0.0.1/issuer' }),
        ),
    );
  });
  await new Promise<void>((r) => introspection.listen(0, '127.0.0.1', r));
  const config = exampleConfig({
    // The gateway's own log is quiet: the audit trail must not be.
    logLevel: 'warn',
    audit: { methods: ['tools/call', 'resources/read'] },
    upstreams: [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('slow', SLOW_SERVER)],
    auth: {
      mode: 'introspection',
      resource: 'http://127.0.0.1/mcp',
      authorizationServers: ['http://127.0.0.1/issuer'],
      introspection: {
        url: `http://127.0.0.1:${(introspection.address() as AddressInfo).port}/introspect`,
        clientId: 'gw',
        clientSecret: 'x',
      },
    },
  });
  const log = capturingLogger('warn', lines);
  gateway = await buildApp(config, { logger: log, defaultMetrics: false });
  url = new URL(config.path, await gateway.app.listen({ host: '127.0.0.1', port: 0 }));
});

afterAll(async () => {
  await gateway?.close();
  await new Promise((r) => introspection?.close(r));
});

const as = { authorization: 'Bearer alice' };
const audited = () => lines.filter((l) => l.component === 'audit').map((l) => l.audit as Record<string, unknown>);

async function session(): Promise<string> {
  const r = await post(
    url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'audit-test', version: '1' } },
    },
    as,
  );
  return r.headers.get('mcp-session-id')!;
}

function request(sid: string, method: string, params: Record<string, unknown>) {
  return post(
    url,
    { jsonrpc: '2.0', id: 1, method, params },
    { ...as, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
}

describe('audit log', () => {
  it('records each audited request once: who, what, the outcome and the time; never arguments or results', async () => {
    const sid = await session();
    lines.length = 0;
    expect(
      (await request(sid, 'tools/call', { name: 'echo__echo', arguments: { text: SECRET } })).json.result.content[0]
        .text,
    ).toBe(SECRET);
    expect(
      (await request(sid, 'tools/call', { name: 'slow__fail', arguments: { note: SECRET } })).json.result.isError,
    ).toBe(true);
    expect((await request(sid, 'tools/call', { name: 'echo__nope', arguments: {} })).json.error.code).toBe(-32602);
    expect((await request(sid, 'tools/list', {})).json.result.tools.length).toBeGreaterThan(0); // not audited

    const entries = audited();
    expect(entries.map((e) => [e.method, e.target, e.outcome, e.toolError ?? false])).toEqual([
      ['tools/call', 'echo__echo', 'ok', false],
      ['tools/call', 'slow__fail', 'ok', true],
      ['tools/call', 'echo__nope', 'INVALID_PARAMS', false],
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({ principal: 'http://127.0.0.1/issuer alice', session: sid, stateless: false });
      expect(typeof e.durationMs).toBe('number');
    }
    expect(JSON.stringify(lines)).not.toContain(SECRET);
    // At info level although the gateway logs at warn: nothing else made it into the log.
    expect(lines.every((l) => l.component === 'audit' || (l.level as number) >= 40)).toBe(true);
  });

  it('stateless requests are recorded without a session', async () => {
    lines.length = 0;
    const { body, headers } = statelessRequest(2, 'tools/call', { name: 'echo__echo', arguments: { text: 'x' } });
    const r = await post(url, body, { ...as, ...headers });
    expect(r.status).toBe(200);
    expect(audited()).toEqual([
      expect.objectContaining({
        method: 'tools/call',
        target: 'echo__echo',
        stateless: true,
        outcome: 'ok',
        principal: 'http://127.0.0.1/issuer alice',
      }),
    ]);
    expect(audited()[0]).not.toHaveProperty('session');
  });

  it('config: only methods that can be audited', () => {
    expect(() => exampleConfig({ audit: { methods: ['initialize'] } })).toThrow(/audit\.methods/);
  });
});
