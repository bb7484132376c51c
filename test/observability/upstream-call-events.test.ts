/**
 * Every upstream call is published alike, whatever era the upstream speaks: a real gateway
 * (tracing to an OTLP receiver on loopback, /metrics scraped) fronting a 2025 upstream (the
 * stdio echo example), a 2026-07-28-only one (examples/modern, a child process) and a dual-era
 * one (both revisions, in this process), each called from a 2025 session and by a 2026 request.
 * Each call has its mcp_client_operation_duration_seconds series and its CLIENT span, under the
 * request's SERVER span, and the upstream gets that CLIENT span's context in `_meta`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { startDualEraUpstream, type DualEraUpstream } from '../support/dual-era-upstream.js';
import {
  ECHO_SERVER,
  openSession,
  post,
  stdioUpstream,
  startGateway,
  type RunningGateway,
} from '../support/gateway.js';
import { httpUpstream, startStatelessFixture, type HttpServerProcess } from '../support/http-upstream.js';
import { postStateless } from '../support/stateless.js';
import {
  CLIENT_KIND as CLIENT,
  SERVER_KIND as SERVER,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import { sample } from '../support/metrics.js';

const CLIENT_COUNT = 'mcp_client_operation_duration_seconds_count';

/** Each upstream, the tool called on it (names as clients see them) and the transport it is reached by. */
const UPSTREAMS = [
  { upstream: 'old', tool: 'old__echo', args: { text: 'hi' }, transport: 'pipe' },
  { upstream: 'modern', tool: 'modern__echo', args: { text: 'hi' }, transport: 'tcp' },
  { upstream: 'dual', tool: 'dual__whoami', args: {}, transport: 'tcp' },
] as const;

describe('upstream-call events for upstreams of either era', () => {
  let receiver: OtlpReceiver;
  let modern: HttpServerProcess;
  let dual: DualEraUpstream;
  let gw: RunningGateway;
  let metrics: string;
  let spans: ReceivedSpan[];
  /** Per upstream, per client era: the JSON-RPC id of its call. */
  const ids = new Map<string, string>();

  beforeAll(async () => {
    [receiver, modern, dual] = await Promise.all([
      startOtlpReceiver(),
      startStatelessFixture(),
      startDualEraUpstream({ dual: true }),
    ]);
    const config = resolveConfig(
      {
        listen: { host: '127.0.0.1', port: 0 },
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
        upstreams: [
          stdioUpstream('old', ECHO_SERVER),
          httpUpstream('modern', modern.url),
          httpUpstream('dual', dual.url),
        ],
      },
      {},
    );
    gw = await startGateway(config, { env: receiver.env });
    const sid = await openSession(gw.url);
    let id = 0;
    for (const { upstream, tool, args } of UPSTREAMS) {
      const a = ++id;
      const session = await post(
        gw.url,
        { jsonrpc: '2.0', id: a, method: 'tools/call', params: { name: tool, arguments: args } },
        { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      );
      expect(session.json?.result?.content, `${tool} from a 2025 session: ${session.text}`).toBeDefined();
      ids.set(`${upstream}/2025`, String(a));
      const b = ++id;
      const stateless = await postStateless(gw, b, 'tools/call', { name: tool, arguments: args });
      expect(stateless.json?.result?.content, `${tool} by a 2026 request: ${stateless.text}`).toBeDefined();
      ids.set(`${upstream}/2026`, String(b));
    }
    metrics = await (await fetch(new URL('/metrics', gw.base))).text();
    // Closing flushes the spans to the receiver.
    await gw.stop();
    spans = receiver.spans;
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await Promise.all([modern?.stop(), dual?.close(), receiver?.close()]);
  });

  it.each(UPSTREAMS)(
    'counts both calls to $upstream in mcp_client_operation_duration_seconds',
    ({ upstream, tool, transport }) => {
      const labels = {
        upstream,
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: tool,
        gen_ai_prompt_name: '',
        error_type: '',
        network_transport: transport,
      };
      expect(
        sample(metrics, CLIENT_COUNT, labels),
        metrics
          .split('\n')
          .filter((l) => l.startsWith(CLIENT_COUNT))
          .join('\n'),
      ).toBe(2);
    },
  );

  it.each(UPSTREAMS)(
    "makes a CLIENT span under each call's SERVER span for $upstream, from both eras",
    ({ upstream, tool }) => {
      for (const era of ['2025', '2026']) {
        const server = spans.filter(
          (s) => s.kind === SERVER && s.attributes['jsonrpc.request.id'] === ids.get(`${upstream}/${era}`),
        );
        expect(server, `SERVER span of the ${era} call to ${upstream}`).toHaveLength(1);
        const client = spans.filter((s) => s.kind === CLIENT && s.parentSpanId === server[0]!.spanId);
        expect(
          client,
          `CLIENT span of the ${era} call to ${upstream}: ${JSON.stringify(spans.map((s) => [s.name, s.kind, s.attributes['mcpgw.upstream']]))}`,
        ).toHaveLength(1);
        expect(client[0]).toMatchObject({ name: `tools/call ${tool}`, traceId: server[0]!.traceId });
        expect(client[0]!.attributes['mcpgw.upstream']).toBe(upstream);
      }
    },
  );

  it("sends a 2026-07-28 upstream the CLIENT span's context in _meta, as any other", () => {
    const calls = dual.seen.filter((s) => s.method === 'tools/call' && s.era === '2026');
    expect(calls).toHaveLength(1);
    const client = spans.find(
      (s) =>
        s.kind === CLIENT &&
        s.attributes['mcpgw.upstream'] === 'dual' &&
        calls[0]!.meta?.traceparent === `00-${s.traceId}-${s.spanId}-01`,
    );
    expect(client, JSON.stringify(calls[0]!.meta)).toBeDefined();
  });
});
