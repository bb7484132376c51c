/**
 * The pool semantics of stdio upstreams hold for remote ones (a worker = one upstream session):
 * maxInFlight per worker, a bounded queue, a fast retryable OVERLOADED past it; per-session
 * workers capped at pool.max; and a stopped worker ends its upstream session (DELETE).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, exampleConfig, openSession, startGateway, type RunningGateway } from '../support/gateway.js';
import { httpUpstream, startEchoHttp, type HttpServerProcess } from '../support/http-upstream.js';

const PROTOCOL = '2025-06-18';
let server: HttpServerProcess;
let shared: RunningGateway;
let perSession: RunningGateway;

async function call(
  gw: RunningGateway,
  sid: string,
  id: number,
  name: string,
  args: Record<string, unknown>,
): Promise<any> {
  const res = await fetch(gw.url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
  return res.json();
}

beforeAll(async () => {
  server = await startEchoHttp();
  [shared, perSession] = await Promise.all([
    startGateway(
      exampleConfig({
        upstreams: [
          httpUpstream('tight', server.url, {
            pool: { min: 1, max: 1, maxInFlight: 2, queueSize: 1, queueTimeoutMs: 10_000 },
          }),
        ],
      }),
    ),
    startGateway(
      exampleConfig({
        upstreams: [httpUpstream('mine', server.url, { mode: 'per-session', pool: { max: 1, maxInFlight: 1 } })],
      }),
    ),
  ]);
});

afterAll(async () => {
  await Promise.all([shared?.stop(), perSession?.stop()]);
  await server?.stop();
});

describe('pool semantics with a remote upstream', () => {
  it('runs maxInFlight calls on its one session, queues one more, and rejects the next at once with OVERLOADED', async () => {
    const sid = await openSession(shared.url, PROTOCOL);
    const replies = await Promise.all([1, 2, 3, 4].map((id) => call(shared, sid, id, 'tight__sleep', { ms: 400 })));
    const overloaded = replies.filter((r) => r.error);
    expect(overloaded).toHaveLength(1);
    expect(overloaded[0].error).toMatchObject({ code: -32006, data: { type: 'OVERLOADED', retryable: true } });
    expect(overloaded[0].error.data.retryAfterMs).toBeTypeOf('number');
    expect(replies.filter((r) => r.result?.content?.[0]?.text === 'slept 400ms')).toHaveLength(3);
    const metrics = await (await fetch(new URL('/metrics', shared.base))).text();
    expect(metrics).toMatch(/^mcpgw_pool_rejections_total\{upstream="tight",reason="queue_full"\} 1$/m);
    expect(metrics).toMatch(/^mcpgw_upstream_circuit_state\{upstream="tight",state="closed"\} 1$/m);
  });

  it('serves every call of the shared pool from one upstream session', async () => {
    const sid = await openSession(shared.url, PROTOCOL);
    const sessions = new Set<string>();
    for (let i = 0; i < 5; i++)
      sessions.add(JSON.parse((await call(shared, sid, 100 + i, 'tight__whoami', {})).result.content[0].text).session);
    expect(sessions.size).toBe(1);
  });

  it('per-session: one upstream session per client session, capped at pool.max; a deleted client session frees its worker', async () => {
    const a = await openSession(perSession.url, PROTOCOL);
    const whoA = JSON.parse((await call(perSession, a, 1, 'mine__whoami', {})).result.content[0].text) as {
      session: string;
    };
    const b = await openSession(perSession.url, PROTOCOL);
    // a's worker is idle, so it makes room for b's (the least recently used idle one goes).
    const whoB = JSON.parse((await call(perSession, b, 1, 'mine__whoami', {})).result.content[0].text) as {
      session: string;
    };
    expect(whoB.session).not.toBe(whoA.session);
    // b is busy: a third session finds no room.
    const busy = call(perSession, b, 2, 'mine__sleep', { ms: 500 });
    await new Promise((r) => setTimeout(r, 100));
    const c = await openSession(perSession.url, PROTOCOL);
    const rejected = await call(perSession, c, 1, 'mine__whoami', {});
    expect(rejected.error.data.type).toBe('OVERLOADED');
    expect((await busy).result.content[0].text).toBe('slept 500ms');
    // Deleting b's session stops its worker: c gets a worker, with a new upstream session.
    await fetch(perSession.url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': b, 'mcp-protocol-version': PROTOCOL },
    });
    const whoC = JSON.parse((await call(perSession, c, 2, 'mine__whoami', {})).result.content[0].text) as {
      session: string;
    };
    expect(whoC.session).not.toBe(whoB.session);
  });
});
