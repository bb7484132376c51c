/**
 * Spans beyond requests, end to end over OTLP/HTTP JSON to a receiver on loopback: a
 * logging/setLevel that fans out to a session's own workers (CLIENT spans under the request's
 * SERVER span), notifications a client sends (a SERVER span each, continuing the POST's context
 * or the notification's own `_meta`), and notifications upstreams send that reach the client
 * (a SERVER span as the gateway receives one, a CLIENT span under it as it passes it on): a
 * call's progress under that call's CLIENT span, a per-session worker's log message under the
 * context it carries in `_meta`. Real stdio upstreams: a raw one with logging, the slow example.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MCP_HEADERS,
  SLOW_SERVER,
  exampleConfig,
  post,
  stdioUpstream,
  startGateway,
  type RunningGateway,
} from '../support/gateway.js';
import {
  CLIENT_KIND as CLIENT,
  SERVER_KIND as SERVER,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';

const V = '2025-06-18';

const TRACE_INIT = '11111111111111111111111111111111';
const TRACE_LEVEL = '22222222222222222222222222222222';
const TRACE_CANCEL = '33333333333333333333333333333333';
const TRACE_ROOTS = '44444444444444444444444444444444';
const TRACE_PROGRESS = '55555555555555555555555555555555';
const SPAN = (n: number) => String(n).repeat(16);

/** Tools and logging; before it answers logging/setLevel it logs twice: once carrying the context it got (SEP-414), once not. */
const LOGGING_SERVER = rawStdioServer(
  `if (m.method === 'initialize') return { protocolVersion: m.params.protocolVersion, capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'logs', version: '1' } };
  if (m.method === 'tools/list') return { tools: [{ name: 'hello', inputSchema: { type: 'object' } }] };
  if (m.method === 'tools/call') return { content: [{ type: 'text', text: 'hello' }] };
  return {};`,
  '',
  `if (m.method !== 'logging/setLevel') return;
  const tp = m.params && m.params._meta && m.params._meta.traceparent;
  send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'with context', _meta: { traceparent: tp } } });
  send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'without' } });`,
);

const traceparent = (trace: string, span: string) => `00-${trace}-${span}-01`;

describe('spans of fan-outs and notifications', () => {
  let receiver: OtlpReceiver;
  let gw: RunningGateway;
  let spans: ReceivedSpan[];
  let sid: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const config = exampleConfig({
      upstreams: [
        {
          name: 'logs',
          transport: 'stdio',
          command: process.execPath,
          args: ['-e', LOGGING_SERVER],
          mode: 'per-session',
        },
        stdioUpstream('slow', SLOW_SERVER),
      ],
    });
    gw = await startGateway(config, { env: receiver.env });

    const init = await fetch(gw.url, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: V, capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    sid = init.headers.get('mcp-session-id')!;
    await init.text();
    const session = (trace?: string, span?: string) => ({
      'mcp-session-id': sid,
      'mcp-protocol-version': V,
      ...(trace ? { traceparent: traceparent(trace, span!) } : {}),
    });
    expect(
      (await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session(TRACE_INIT, SPAN(1))))
        .status,
    ).toBe(202);
    // The session's own worker of `logs` starts with its first call: setLevel goes to the workers a session has.
    expect(
      (
        await post(
          gw.url,
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'logs__hello', arguments: {} } },
          session(),
        )
      ).json.result.content[0].text,
    ).toBe('hello');
    const level = await post(
      gw.url,
      { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } },
      session(TRACE_LEVEL, SPAN(2)),
    );
    expect(level.status).toBe(200);
    expect(level.text).toContain('"id":2,"result":{}');
    expect(level.text).toContain('with context');
    // A cancel of nothing in flight still reached the gateway; roots/list_changed carries its own context.
    expect(
      (
        await post(
          gw.url,
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99, reason: 'x' } },
          session(TRACE_CANCEL, SPAN(3)),
        )
      ).status,
    ).toBe(202);
    const roots = {
      jsonrpc: '2.0',
      method: 'notifications/roots/list_changed',
      params: { _meta: { traceparent: traceparent(TRACE_ROOTS, SPAN(4)) } },
    };
    expect((await post(gw.url, roots, session(TRACE_CANCEL, SPAN(5)))).status).toBe(202);
    const sleep = { name: 'slow__sleep', arguments: { ms: 50, steps: 2 }, _meta: { progressToken: 'p1' } };
    const progress = await post(
      gw.url,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: sleep },
      session(TRACE_PROGRESS, SPAN(6)),
    );
    expect(progress.text.match(/notifications\/progress/g)).toHaveLength(2);
    // Closing flushes the batch.
    await gw.stop();
    spans = receiver.spans;
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await receiver?.close();
  });

  const find = (pred: (s: ReceivedSpan) => boolean) => spans.filter(pred);
  const dump = () =>
    JSON.stringify(spans.map((s) => [s.traceId.slice(0, 4), s.spanId, s.parentSpanId, s.name, s.kind]));

  it('a setLevel that fans out: a CLIENT span per own worker, under the SERVER span of the request', () => {
    const server = find((s) => s.traceId === TRACE_LEVEL && s.kind === SERVER && s.name === 'logging/setLevel');
    expect(server, dump()).toHaveLength(1);
    expect(server[0]!.parentSpanId).toBe(SPAN(2));
    const clients = find((s) => s.kind === CLIENT && s.name === 'logging/setLevel');
    expect(clients, dump()).toHaveLength(1);
    expect(clients[0]).toMatchObject({
      traceId: TRACE_LEVEL,
      parentSpanId: server[0]!.spanId,
      attributes: { 'mcpgw.upstream': 'logs', 'network.transport': 'pipe' },
    });
  });

  it("a client's notifications: a SERVER span each, under the POST's context or the notification's own", () => {
    const initialized = find((s) => s.name === 'notifications/initialized');
    expect(initialized, dump()).toHaveLength(1);
    expect(initialized[0]).toMatchObject({ kind: SERVER, traceId: TRACE_INIT, parentSpanId: SPAN(1) });
    expect(initialized[0]!.attributes).toMatchObject({
      'mcp.method.name': 'notifications/initialized',
      'network.transport': 'tcp',
      'mcp.protocol.version': V,
    });
    expect(initialized[0]!.attributes['mcp.session.id']).toMatch(/^[0-9a-f]{32}$/);
    expect(initialized[0]!.attributes['jsonrpc.request.id']).toBeUndefined();
    const cancelled = find((s) => s.name === 'notifications/cancelled');
    expect(cancelled, dump()).toHaveLength(1);
    expect(cancelled[0]).toMatchObject({ kind: SERVER, traceId: TRACE_CANCEL, parentSpanId: SPAN(3) });
    const roots = find((s) => s.name === 'notifications/roots/list_changed');
    expect(roots, dump()).toHaveLength(1);
    expect(roots[0]).toMatchObject({ kind: SERVER, traceId: TRACE_ROOTS, parentSpanId: SPAN(4) });
  });

  it("an upstream's progress: SERVER span under the call's CLIENT span, CLIENT span under it as it goes to the client", () => {
    const call = find((s) => s.traceId === TRACE_PROGRESS && s.kind === CLIENT && s.name === 'tools/call slow__sleep');
    expect(call, dump()).toHaveLength(1);
    const received = find((s) => s.name === 'notifications/progress' && s.kind === SERVER);
    expect(received, dump()).toHaveLength(2);
    for (const r of received) {
      expect(r).toMatchObject({
        traceId: TRACE_PROGRESS,
        parentSpanId: call[0]!.spanId,
        attributes: { 'mcpgw.upstream': 'slow', 'network.transport': 'pipe' },
      });
      const sent = find((s) => s.parentSpanId === r.spanId);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({
        kind: CLIENT,
        name: 'notifications/progress',
        attributes: { 'network.transport': 'tcp', 'mcp.protocol.version': V },
      });
      // The same digest as the session's own spans carry.
      expect(sent[0]!.attributes['mcp.session.id']).toBe(
        find((s) => s.name === 'notifications/initialized')[0]!.attributes['mcp.session.id'],
      );
    }
  });

  it("a per-session worker's log message: under the context it carries, else a trace of its own", () => {
    const clientSpan = find((s) => s.kind === CLIENT && s.name === 'logging/setLevel')[0]!;
    const received = find((s) => s.name === 'notifications/message' && s.kind === SERVER);
    expect(received, dump()).toHaveLength(2);
    const withContext = received.find((s) => s.parentSpanId === clientSpan.spanId);
    expect(withContext?.traceId).toBe(TRACE_LEVEL);
    const without = received.find((s) => s !== withContext)!;
    expect(without.parentSpanId).toBe('');
    expect(without.traceId).not.toBe(TRACE_LEVEL);
    for (const r of received)
      expect(
        find((s) => s.kind === CLIENT && s.parentSpanId === r.spanId && s.name === 'notifications/message'),
      ).toHaveLength(1);
  });
});
