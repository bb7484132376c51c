/**
 * A remote upstream that misbehaves (test/support/misbehaving-upstream.ts, real HTTP on
 * loopback): each misbehaviour has one defined outcome for the caller, and none of them hangs.
 *
 *   hangs (no headers, or a silent SSE reply)  → UPSTREAM_TIMEOUT after timeoutMs, upstream told to cancel
 *   answers garbage (not JSON, HTML, bad SSE data, response to another id) → UPSTREAM_PROTOCOL_ERROR at once
 *   closes the SSE reply mid-stream            → progress so far, then UPSTREAM_UNAVAILABLE (a tool call is not resent)
 *   …after naming its events (SEP-1699)        → resumed with GET + Last-Event-ID: the answer arrives
 *   HTTP 503                                   → tools/call: UPSTREAM_UNAVAILABLE, not resent; resources/read: retried
 *   404 for its session                        → one re-initialize for all calls that hit it, calls resent
 *   404 again on the new session               → UPSTREAM_UNAVAILABLE, the worker is replaced
 *   repeated failures                          → circuit open, UPSTREAM_CIRCUIT_OPEN without reaching it; a probe closes it
 *   down at gateway start-up                   → left out, joins the catalog when it comes up
 *   gateway shutdown                           → every upstream session ended with DELETE
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, exampleConfig, openSession, startGateway, type RunningGateway } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { MisbehavingUpstream } from '../support/misbehaving-upstream.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const PROTOCOL = '2025-06-18';
const TIMEOUT_MS = 1000;

let upstream: MisbehavingUpstream;
/** A second one for the breaker tests: both list the same resource, so they cannot share a catalog. */
let other: MisbehavingUpstream;
let gw: RunningGateway;
let sid: string;
let nextId = 1;

interface Reply {
  /** Every JSON-RPC message of the reply, in order (one for JSON, several for SSE). */
  messages: any[];
  response: any;
  ms: number;
}

async function rpc(method: string, params: Record<string, unknown>): Promise<Reply> {
  const started = performance.now();
  const res = await fetch(gw.url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  const text = await res.text();
  const messages = res.headers.get('content-type')?.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .filter(Boolean)
        .map((d) => JSON.parse(d))
    : [JSON.parse(text)];
  return { messages, response: messages.find((m) => 'result' in m || 'error' in m), ms: performance.now() - started };
}

const callTool = (name: string, progress = false) =>
  rpc('tools/call', { name, arguments: {}, ...(progress ? { _meta: { progressToken: 'p' } } : {}) });

const toolNames = async () =>
  ((await rpc('tools/list', {})).response.result.tools as Array<{ name: string }>).map((t) => t.name);

beforeAll(async () => {
  [upstream, other] = await Promise.all([new MisbehavingUpstream().start(), new MisbehavingUpstream('other').start()]);
  const common = { timeoutMs: TIMEOUT_MS, pool: { min: 1, max: 1 }, health: { intervalMs: 0, timeoutMs: 500 } };
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        // A breaker that never opens, so each misbehaviour is seen on its own…
        httpUpstream('bad', upstream.url, {
          ...common,
          breaker: { failureThreshold: 1000, openMs: 300, maxOpenMs: 600 },
        }),
        // …and one that opens after three failures.
        httpUpstream('brk', other.url, {
          ...common,
          required: true,
          breaker: { failureThreshold: 3, openMs: 300, maxOpenMs: 600 },
        }),
      ],
    }),
  );
  sid = await openSession(gw.url, PROTOCOL);
});

afterAll(async () => {
  await gw?.stop();
  await upstream?.stop();
  await other?.stop();
});

describe('an upstream that hangs', () => {
  it.each(['hang', 'hang-sse'])(
    '%s: UPSTREAM_TIMEOUT after timeoutMs, and the upstream is told to cancel',
    async (tool) => {
      const cancelledBefore = upstream.cancelled.length;
      const { response, ms } = await callTool(`bad__${tool}`);
      expect(response.error.data.type).toBe('UPSTREAM_TIMEOUT');
      // Correctness bounds: it waited for the timeout, and not much past it.
      expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(ms).toBeLessThan(TIMEOUT_MS + 2000);
      await until('notifications/cancelled reached the upstream', () => upstream.cancelled.length > cancelledBefore);
      expect(internals(gw.gateway.server).inFlight).toBe(0);
    },
  );
});

describe('an upstream that answers garbage', () => {
  it.each(['garbage-json', 'garbage-html', 'garbage-sse', 'wrong-id'])(
    '%s: UPSTREAM_PROTOCOL_ERROR, without waiting for the timeout',
    async (tool) => {
      const { response, ms } = await callTool(`bad__${tool}`);
      expect(response.error.code).toBe(-32008);
      expect(response.error.data).toMatchObject({ type: 'UPSTREAM_PROTOCOL_ERROR', upstream: 'bad' });
      expect(ms).toBeLessThan(TIMEOUT_MS);
    },
  );
});

describe('an upstream that closes its SSE reply mid-stream', () => {
  it('without event ids: the progress sent so far, then UPSTREAM_UNAVAILABLE; a tool call is not sent twice', async () => {
    const before = upstream.hitsOf('cut-sse');
    const { messages, response } = await callTool('bad__cut-sse', true);
    expect(messages[0]).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: 'p', progress: 1 },
    });
    expect(response.error.data.type).toBe('UPSTREAM_UNAVAILABLE');
    expect(response.error.message).toMatch(/closed the stream before answering|connection/);
    expect(upstream.hitsOf('cut-sse')).toBe(before + 1);
  });

  it('with event ids: the gateway resumes the stream with GET and Last-Event-ID and the answer arrives', async () => {
    const resumes = upstream.resumes;
    const { messages, response } = await callTool('bad__resumable', true);
    expect(messages[0]).toMatchObject({ method: 'notifications/progress', params: { progressToken: 'p' } });
    expect(response.result.content[0].text).toBe('answer after resumption');
    expect(upstream.resumes).toBe(resumes + 1);
  });
});

describe('HTTP errors and retries', () => {
  it('a 503 to tools/call is UPSTREAM_UNAVAILABLE and is not resent (a tool may have side effects)', async () => {
    const before = upstream.hitsOf('fail-503');
    const { response } = await callTool('bad__fail-503');
    expect(response.error.data).toMatchObject({ type: 'UPSTREAM_UNAVAILABLE', httpStatus: 503, retryable: true });
    expect(upstream.hitsOf('fail-503')).toBe(before + 1);
  });

  it('a 503 to resources/read (idempotent) is retried with backoff until it works', async () => {
    const { response } = await rpc('resources/read', { uri: 'flaky://x' });
    expect(response.result.contents[0].text).toBe('read on try 3');
  });
});

describe('an upstream that returns 404 for its session', () => {
  it('re-initializes once for all the calls that hit it and resends them', async () => {
    expect((await callTool('bad__ok')).response.result).toBeDefined();
    const before = upstream.initializes;
    upstream.expireSessions();
    const replies = await Promise.all(Array.from({ length: 10 }, () => callTool('bad__ok')));
    for (const r of replies) expect(r.response.result.content[0].text).toBe('ok');
    expect(upstream.initializes).toBe(before + 1);
  });

  it('a new session that is gone at once too: UPSTREAM_UNAVAILABLE, and the worker is replaced', async () => {
    upstream.alwaysExpire = true;
    const { response } = await callTool('bad__ok');
    expect(response.error.data.type).toBe('UPSTREAM_UNAVAILABLE');
    upstream.alwaysExpire = false;
    await until('a new worker answers', async () => (await callTool('bad__ok')).response.result !== undefined);
  });
});

describe('the circuit breaker', () => {
  it('opens after failureThreshold failures: calls then fail fast without reaching the upstream, and its tools are not listed', async () => {
    for (let i = 0; i < 3; i++)
      expect((await callTool('brk__fail-500')).response.error.data.type).toBe('UPSTREAM_UNAVAILABLE');
    const hits = other.hitsOf('ok');
    const { response } = await callTool('brk__ok');
    expect(response.error.code).toBe(-32011);
    expect(response.error.data).toMatchObject({ type: 'UPSTREAM_CIRCUIT_OPEN', retryable: true, upstream: 'brk' });
    expect(response.error.data.retryAfterMs).toBeTypeOf('number');
    expect(other.hitsOf('ok')).toBe(hits);
    const ready = await fetch(new URL('/readyz', gw.base));
    expect(ready.status).toBe(503);
    const names = await toolNames();
    expect(names).toContain('bad__ok');
    expect(names.some((n) => n.startsWith('brk__'))).toBe(false);
  });

  it('half-opens after openMs; the health probe succeeds and closes it; the tools are back', async () => {
    await until('brk is listed again', async () => (await toolNames()).includes('brk__ok'));
    expect((await callTool('brk__ok')).response.result.content[0].text).toBe('ok');
    const body = (await (await fetch(new URL('/readyz', gw.base))).json()) as {
      upstreams: Record<string, { circuit: string }>;
    };
    expect(body.upstreams.brk!.circuit).toBe('closed');
  });
});

describe('an upstream that is down when the gateway starts', () => {
  it('is left out, reported down, and joins the catalog when it comes up; on shutdown its sessions are ended (DELETE)', async () => {
    const port = await freePort();
    const late = new MisbehavingUpstream();
    const gw2 = await startGateway(
      exampleConfig({
        upstreams: [
          httpUpstream('late', `http://127.0.0.1:${port}/mcp`, {
            required: true,
            health: { intervalMs: 200, timeoutMs: 500 },
          }),
        ],
      }),
    );
    try {
      const ready = await fetch(new URL('/readyz', gw2.base));
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { upstreams: { late: { state: string } } }).upstreams.late.state).toBe('down');
      await late.start(port);
      const sid2 = await openSession(gw2.url, PROTOCOL);
      await until(
        'its tools are listed',
        async () => {
          const res = await fetch(gw2.url, {
            method: 'POST',
            headers: { ...MCP_HEADERS, 'mcp-session-id': sid2, 'mcp-protocol-version': PROTOCOL },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
          });
          const body = (await res.json()) as { result: { tools: Array<{ name: string }> } };
          return body.result.tools.some((t) => t.name === 'late__ok');
        },
        20_000,
      );
      expect((await fetch(new URL('/readyz', gw2.base))).status).toBe(200);
      // Its 404 to server/discover (auto) was an answer: the health monitor now pings it over a 2025 session of its own.
      await until('the health probe has its own session', () => late.initializes >= 2, 5000);
      await gw2.stop();
      // The pool's worker and the health probe: each its own session, each ended.
      expect(late.deletes).toBeGreaterThanOrEqual(2);
    } finally {
      await gw2.stop();
      await late.stop();
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
