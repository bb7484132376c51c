/**
 * The access log and request ids, read from the gateway's own pino output: one line per HTTP
 * request with method, path, status, what it carried, duration, request id and principal; the
 * client's x-request-id (when safe) on it, on the audit line, and back in the reply.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createLogger } from '../../src/observability/logger.js';
import { exampleConfig, MCP_HEADERS, post, type RunningGateway } from '../support/gateway.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';

type Line = Record<string, any>;

describe('access log', () => {
  const lines: Line[] = [];
  let issuer: JwtIssuer;
  let gw: RunningGateway;
  let auth: { authorization: string };
  let sid: string;

  const accessLine = (reqId: string) => lines.filter((l) => l.msg === 'access' && l.reqId === reqId);

  beforeAll(async () => {
    issuer = await startJwtIssuer();
    const config = exampleConfig({ logLevel: 'info', auth: issuer.authConfig, audit: { methods: ['tools/call'] } });
    const logger = createLogger('info', { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
    const gateway = await buildApp(config, { logger, defaultMetrics: false });
    const address = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
    gw = { gateway, url: new URL(config.path, address), base: address, stop: () => gateway.close() };
    auth = await issuer.bearer('alice');
    const init = await post(
      gw.url,
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      { ...auth, 'x-request-id': 'req-init' },
    );
    expect(init.status).toBe(200);
    sid = init.headers.get('mcp-session-id')!;
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
    await issuer?.close();
  });

  const session = () => ({ ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });

  it('writes a 200 with the request id the client sent, what it carried and who sent it, and no body', async () => {
    const r = await post(
      gw.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo__echo', arguments: { text: 'secret-argument' } },
      },
      { ...session(), 'x-request-id': 'req-200' },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('req-200');
    const [line, ...more] = accessLine('req-200');
    expect(more).toHaveLength(0);
    expect(line).toMatchObject({
      level: 30,
      method: 'POST',
      path: '/mcp',
      status: 200,
      data: { type: 'request', method: 'tools/call' },
    });
    expect(line!.principal).toContain('alice');
    expect(typeof line!.durationMs).toBe('number');
    expect(JSON.stringify(lines)).not.toContain('secret-argument');
    // The audit line of the same request carries its id.
    const audit = lines.find((l) => l.component === 'audit' && l.reqId === 'req-200');
    expect(audit?.audit).toMatchObject({ method: 'tools/call', outcome: 'ok' });
  });

  it('puts the request id on every line of the request (initialize: its session line too)', () => {
    expect(lines.find((l) => l.msg === 'session opened')?.reqId).toBe('req-init');
    expect(accessLine('req-init')[0]).toMatchObject({ status: 200, data: { type: 'request', method: 'initialize' } });
  });

  it('writes a 400 (a body that is not JSON)', async () => {
    const r = await post(gw.url, '{not json', { ...session(), 'x-request-id': 'req-400' });
    expect(r.status).toBe(400);
    expect(r.headers.get('x-request-id')).toBe('req-400');
    expect(accessLine('req-400')).toEqual([expect.objectContaining({ method: 'POST', path: '/mcp', status: 400 })]);
  });

  it('writes a 404 (a session that does not exist)', async () => {
    const r = await post(
      gw.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { ...session(), 'mcp-session-id': 'no-such-session', 'x-request-id': 'req-404' },
    );
    expect(r.status).toBe(404);
    expect(accessLine('req-404')).toEqual([
      expect.objectContaining({ status: 404, data: { type: 'request', method: 'tools/list' } }),
    ]);
  });

  it('writes a 401 (no token), with no principal', async () => {
    const r = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'x-request-id': 'req-401' });
    expect(r.status).toBe(401);
    expect(r.headers.get('x-request-id')).toBe('req-401');
    const [line] = accessLine('req-401');
    expect(line).toMatchObject({ status: 401, method: 'POST', path: '/mcp' });
    expect(line).not.toHaveProperty('principal');
  });

  it('writes a line for routes other than the MCP endpoint, without the query string', async () => {
    const res = await fetch(new URL('/healthz?token=abc', gw.base), { headers: { 'x-request-id': 'req-health' } });
    expect(res.status).toBe(200);
    await res.text();
    expect(accessLine('req-health')).toEqual([
      expect.objectContaining({ method: 'GET', path: '/healthz', status: 200 }),
    ]);
  });

  it('makes up an id when the client sent none, or one that is too long or not plain', async () => {
    for (const sent of [undefined, 'x'.repeat(129), 'two words', 'quote"{}', 'tab\tid', '']) {
      const res = await fetch(gw.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...(sent !== undefined ? { 'x-request-id': sent } : {}) },
        body: '{}',
      });
      await res.text();
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(accessLine(id!)).toHaveLength(1);
    }
  });
});
