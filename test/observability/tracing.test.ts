/**
 * Tracing end to end: a real gateway with OTEL_TRACES_EXPORTER=otlp exporting OTLP/HTTP JSON to a
 * receiver on loopback, a stdio upstream (tapped: what it read) and a Streamable HTTP upstream
 * (recording the trace headers of each POST). A client's traceparent is continued: SERVER span
 * under the client's span, CLIENT span under the SERVER span, and its context sent on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracingSettings } from '../../src/observability/tracing.js';
import {
  ECHO_SERVER,
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { httpUpstream, startEchoHttp, type HttpServerProcess } from '../support/http-upstream.js';
import { fileLines } from '../support/file-lines.js';
import { MODERN_VERSION, postStateless } from '../support/stateless.js';
import {
  CLIENT_KIND as CLIENT,
  SERVER_KIND as SERVER,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import { readTap, tappedStdio } from '../support/stdio-tap.js';

const TRACE_A = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_A = '00f067aa0ba902b7';
const TRACE_B = '0af7651916cd43dd8448eb211c80319c';
const SPAN_B = 'b7ad6b7169203331';
const TRACE_C = '5b8efff798038103d269b633813fc60c';
const SPAN_C = 'eee19b7ec3c1b174';
const TRACE_D = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const SPAN_D = '1122334455667788';

describe('tracing over OTLP/HTTP JSON', () => {
  let dir: string;
  let receiver: OtlpReceiver;
  let remote: HttpServerProcess;
  let gw: RunningGateway;
  let stdioTap: string;
  let headersFile: string;
  let spans: ReceivedSpan[];
  let readmeUri: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcpgw-trace-'));
    stdioTap = join(dir, 'stdio.tap');
    headersFile = join(dir, 'http-headers.jsonl');
    receiver = await startOtlpReceiver();
    remote = await startEchoHttp(0, ['--record-headers', headersFile]);
    gw = await startGateway(
      exampleConfig({
        upstreams: [
          stdioUpstream('echo', ECHO_SERVER, tappedStdio(ECHO_SERVER, stdioTap)),
          httpUpstream('remote', remote.url),
        ],
        // Direct calls are as before; call_tool's is traced as the call it became.
        toolSearch: { enabled: true },
      }),
      { env: { ...receiver.env, OTEL_SERVICE_NAME: 'gw-under-test' } },
    );
    const sid = await openSession(gw.url);
    const headers = (trace: string, span: string) => ({
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-06-18',
      traceparent: `00-${trace}-${span}-01`,
      tracestate: 'client=1',
    });
    const a = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'via stdio' } } },
      headers(TRACE_A, SPAN_A),
    );
    expect(a.json.result.content[0].text).toBe('via stdio');
    const b = await post(
      gw.url,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'remote__echo', arguments: { text: 'via http' } },
      },
      headers(TRACE_B, SPAN_B),
    );
    expect(b.json.result.content[0].text).toBe('via http');
    // 2026-07-28: the context is the request's own, in params._meta.
    const c = await postStateless(gw, 3, 'tools/call', {
      name: 'remote__echo',
      arguments: { text: 'modern' },
      _meta: { traceparent: `00-${TRACE_C}-${SPAN_C}-01` },
    });
    expect(c.json.result.content[0].text).toBe('modern');
    // An unknown tool: a SERVER span with the error's JSON-RPC code, and no CLIENT span.
    const d = await post(
      gw.url,
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'nope', arguments: {} } },
      headers(TRACE_A, SPAN_A),
    );
    expect(d.json.error.code).toBe(-32602);
    const list = await post(gw.url, { jsonrpc: '2.0', id: 5, method: 'resources/list' }, headers(TRACE_A, SPAN_A));
    const uri = (list.json.result.resources as Array<{ uri: string }>).find((r) => r.uri.endsWith('readme'))!.uri;
    readmeUri = uri;
    const read = await post(
      gw.url,
      { jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri } },
      headers(TRACE_A, SPAN_A),
    );
    expect(read.json.result.contents).toHaveLength(1);
    const e = await post(
      gw.url,
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'call_tool', arguments: { name: 'echo__add', arguments: { a: 1, b: 2 } } },
      },
      headers(TRACE_D, SPAN_D),
    );
    expect(e.json.result.content[0].text).toBe('3');
    // Closing flushes the batch to the receiver.
    await gw.stop();
    spans = receiver.spans;
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await remote?.stop();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function serverSpan(trace: string, name: string): ReceivedSpan {
    const found = spans.filter((s) => s.traceId === trace && s.kind === SERVER && s.name === name);
    expect(
      found,
      `SERVER span ${name} in trace ${trace}: ${JSON.stringify(spans.map((s) => [s.traceId, s.name, s.kind]))}`,
    ).toHaveLength(1);
    return found[0]!;
  }

  function clientSpanUnder(parent: ReceivedSpan): ReceivedSpan {
    const found = spans.filter((s) => s.parentSpanId === parent.spanId && s.kind === CLIENT);
    expect(found).toHaveLength(1);
    expect(found[0]!.traceId).toBe(parent.traceId);
    return found[0]!;
  }

  it('exports over OTLP/HTTP JSON to the configured endpoint, under OTEL_SERVICE_NAME', () => {
    expect(receiver.posts.length).toBeGreaterThan(0);
    expect(receiver.posts.every((p) => p.path === '/v1/traces' && p.contentType.startsWith('application/json'))).toBe(
      true,
    );
    expect(spans[0]!.resource['service.name']).toBe('gw-under-test');
  });

  it('continues the client trace through a stdio upstream: SERVER under the client span, CLIENT under it, context in _meta', () => {
    const server = serverSpan(TRACE_A, 'tools/call echo__echo');
    expect(server.parentSpanId).toBe(SPAN_A);
    expect(server.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo__echo',
      'mcp.protocol.version': '2025-06-18',
      'jsonrpc.request.id': '1',
      'network.transport': 'tcp',
    });
    // A digest of the session id, never the id itself.
    expect(server.attributes['mcp.session.id']).toMatch(/^[0-9a-f]{32}$/);
    const client = clientSpanUnder(server);
    expect(client.name).toBe('tools/call echo__echo');
    expect(client.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'network.transport': 'pipe',
      'mcpgw.upstream': 'echo',
    });
    const call = readTap(stdioTap).find((t) => t.dir === 'IN' && t.message.method === 'tools/call');
    expect(call?.message.params._meta.traceparent).toBe(`00-${TRACE_A}-${client.spanId}-01`);
  });

  it('continues it through an HTTP upstream, which gets the CLIENT span as traceparent header and in _meta', () => {
    const server = serverSpan(TRACE_B, 'tools/call remote__echo');
    expect(server.parentSpanId).toBe(SPAN_B);
    const client = clientSpanUnder(server);
    expect(client.attributes['network.transport']).toBe('tcp');
    const posts = fileLines(headersFile).map(
      (l) => JSON.parse(l) as { traceparent?: string; tracestate?: string; body?: any },
    );
    const call = posts.find((p) => p.body?.method === 'tools/call' && p.body.params.arguments.text === 'via http');
    expect(call?.traceparent).toBe(`00-${TRACE_B}-${client.spanId}-01`);
    expect(call?.tracestate).toBe('client=1');
    expect(call?.body.params._meta.traceparent).toBe(call?.traceparent);
  });

  it("takes a 2026-07-28 request's context from params._meta", () => {
    const server = serverSpan(TRACE_C, 'tools/call remote__echo');
    expect(server.parentSpanId).toBe(SPAN_C);
    expect(server.attributes['mcp.protocol.version']).toBe(MODERN_VERSION);
    expect(server.attributes['mcp.session.id']).toBeUndefined();
    const client = clientSpanUnder(server);
    const posts = fileLines(headersFile).map((l) => JSON.parse(l) as { traceparent?: string; body?: any });
    expect(posts.find((p) => p.body?.params?.arguments?.text === 'modern')?.traceparent).toBe(
      `00-${TRACE_C}-${client.spanId}-01`,
    );
  });

  it("names call_tool's span by the tool it ran: one SERVER span, the CLIENT span under it", () => {
    const server = serverSpan(TRACE_D, 'tools/call echo__add');
    expect(server.attributes).toMatchObject({ 'gen_ai.tool.name': 'echo__add', 'jsonrpc.request.id': '7' });
    expect(spans.filter((s) => s.traceId === TRACE_D && s.kind === SERVER)).toHaveLength(1);
    expect(clientSpanUnder(server).name).toBe('tools/call echo__add');
  });

  it('records a failed request with error.type = its JSON-RPC code and an error status', () => {
    const failed = spans.find(
      (s) => s.traceId === TRACE_A && s.kind === SERVER && s.attributes['jsonrpc.request.id'] === '4',
    );
    expect(failed?.name).toBe('tools/call');
    expect(failed?.attributes['error.type']).toBe('-32602');
    expect(failed?.status.code).toBe(2);
    expect(spans.filter((s) => s.parentSpanId === failed?.spanId)).toHaveLength(0);
  });

  it('names resources/read by its method only, the URI an attribute', () => {
    const read = spans.find((s) => s.kind === SERVER && s.attributes['jsonrpc.request.id'] === '6');
    expect(read?.name).toBe('resources/read');
    expect(read?.attributes['mcp.resource.uri']).toBe(readmeUri);
  });

  it('traces initialize too (a new trace when the client sent no context)', () => {
    const init = spans.filter((s) => s.kind === SERVER && s.name === 'initialize');
    expect(init.length).toBeGreaterThanOrEqual(1);
    expect(init[0]!.attributes['mcp.protocol.version']).toBe('2025-06-18');
  });
});

describe('tracing settings from OTEL_* variables', () => {
  it('is off unless OTEL_TRACES_EXPORTER names an exporter', () => {
    expect(tracingSettings({})).toBeUndefined();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBeUndefined();
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  });

  it('reads the protocol and endpoint, the signal-specific ones first', () => {
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' })).toMatchObject({
      protocol: 'http/protobuf',
      url: 'http://localhost:4318/v1/traces',
    });
    expect(
      tracingSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      }),
    ).toMatchObject({
      protocol: 'http/json',
      url: 'http://c:4318/v1/traces',
    });
    expect(
      tracingSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
      }),
    ).toMatchObject({ url: 'http://t/x' });
  });

  it('refuses what it cannot honour, instead of exporting nothing', () => {
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' })).toBeInstanceOf(Error);
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBeInstanceOf(
      Error,
    );
  });
});

describe('tracing over OTLP/HTTP protobuf', () => {
  it('POSTs protobuf bodies when OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf', async () => {
    const receiver = await startOtlpReceiver();
    const env = { ...receiver.env, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' };
    const gw = await startGateway(exampleConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER)] }), { env });
    try {
      const sid = await openSession(gw.url);
      const r = await post(
        gw.url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'pb' } } },
        { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      );
      expect(r.json.result.content[0].text).toBe('pb');
    } finally {
      await gw.stop();
      await receiver.close();
    }
    expect(receiver.posts.length).toBeGreaterThan(0);
    expect(receiver.posts[0]).toMatchObject({ path: '/v1/traces', contentType: 'application/x-protobuf' });
    expect(receiver.posts[0]!.bytes).toBeGreaterThan(0);
  }, 30_000);
});

describe('tracing off', () => {
  it('passes a well-formed client context on, and never turns a malformed one into headers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-trace-off-'));
    const headersFile = join(dir, 'headers.jsonl');
    const remote = await startEchoHttp(0, ['--record-headers', headersFile]);
    const gw = await startGateway(exampleConfig({ upstreams: [httpUpstream('remote', remote.url)] }), { env: {} });
    try {
      const sid = await openSession(gw.url);
      const call = (id: number, meta: Record<string, unknown>) =>
        post(
          gw.url,
          {
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { name: 'remote__echo', arguments: { text: `t${id}` }, _meta: meta },
          },
          { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        );
      const good = `00-${TRACE_A}-${SPAN_A}-01`;
      const bad = [
        `00-${TRACE_A}-${SPAN_A}-01\r\nx-injected: 1`,
        'x'.repeat(100_000),
        `00-${TRACE_A.toUpperCase()}-${SPAN_A}-01`,
      ];
      expect((await call(1, { traceparent: good, tracestate: 'a=1' })).json.result.content[0].text).toBe('t1');
      for (const [i, traceparent] of bad.entries())
        expect((await call(10 + i, { traceparent, tracestate: 'b=\u0001' })).json.result.content[0].text).toBe(
          `t${10 + i}`,
        );
      const posts = fileLines(headersFile).map(
        (l) => JSON.parse(l) as { traceparent?: string; tracestate?: string; body?: any },
      );
      const byText = (text: string) => posts.find((p) => p.body?.params?.arguments?.text === text);
      expect(byText('t1')).toMatchObject({ traceparent: good, tracestate: 'a=1' });
      for (const i of bad.keys()) expect(byText(`t${10 + i}`)?.traceparent).toBeUndefined();
    } finally {
      await gw.stop();
      await remote.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
