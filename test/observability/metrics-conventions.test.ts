/**
 * The metrics after OpenTelemetry's MCP conventions, scraped from /metrics of a real gateway
 * (stdio example upstreams, and a remote one that is down): tool_error, JSON-RPC codes in
 * error_type, the prompt/version/transport attributes, the client-side duration per upstream,
 * session duration, initialize and ping, upstream_up, and no store gauge for the memory store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventChannel } from '../../src/observability/events.js';
import { exampleConfig, openSession, post, startGateway, type RunningGateway } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { sample } from '../support/metrics.js';

const SERVER_COUNT = 'mcp_server_operation_duration_seconds_count';
const CLIENT_COUNT = 'mcp_client_operation_duration_seconds_count';

function server(method: string, extra: Partial<Record<string, string>> = {}): Record<string, string> {
  return {
    mcp_method_name: method,
    gen_ai_tool_name: '',
    gen_ai_prompt_name: '',
    error_type: '',
    mcp_protocol_version: '2025-06-18',
    network_transport: 'tcp',
    ...extra,
  } as Record<string, string>;
}

describe('metrics after the MCP semantic conventions', () => {
  let gw: RunningGateway;
  let sid: string;
  const scrape = async () => (await fetch(new URL('/metrics', gw.base))).text();
  const call = (id: number, method: string, params?: Record<string, unknown>) =>
    post(
      gw.url,
      { jsonrpc: '2.0', id, method, ...(params ? { params } : {}) },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );

  beforeAll(async () => {
    // Port 9 on loopback: nothing listens, so this upstream stays down.
    const down = httpUpstream('down', 'http://127.0.0.1:9/mcp', {
      connectTimeoutMs: 200,
      retry: { attempts: 1, initialDelayMs: 10, maxDelayMs: 10 },
    });
    gw = await startGateway(exampleConfig({ upstreams: [...exampleConfig().upstreams, down] }));
    sid = await openSession(gw.url);
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
  });

  it('records a tool result with isError: true as error_type="tool_error", on both sides', async () => {
    const r = await call(1, 'tools/call', { name: 'slow__fail', arguments: {} });
    expect(r.json.result.isError).toBe(true);
    const text = await scrape();
    expect(
      sample(text, SERVER_COUNT, server('tools/call', { gen_ai_tool_name: 'slow__fail', error_type: 'tool_error' })),
    ).toBe(1);
    expect(
      sample(text, CLIENT_COUNT, {
        upstream: 'slow',
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'slow__fail',
        gen_ai_prompt_name: '',
        error_type: 'tool_error',
        network_transport: 'pipe',
      }),
    ).toBe(1);
  });

  it('puts the JSON-RPC code in error_type, not a name of ours, and bounds what the client chose', async () => {
    const r = await call(2, 'tools/call', { name: 'no_such_tool', arguments: {} });
    expect(r.json.error.code).toBe(-32602);
    const m = await call(3, 'no/such/method');
    expect(m.json.error.code).toBe(-32601);
    const text = await scrape();
    expect(sample(text, SERVER_COUNT, server('tools/call', { error_type: '-32602' }))).toBe(1);
    expect(sample(text, SERVER_COUNT, server('_other', { error_type: '-32601' }))).toBe(1);
    expect(text).not.toContain('no_such_tool');
    expect(text).not.toContain('no/such/method');
    expect(text).not.toMatch(/error_type="[A-Z_]+"/);
  });

  it('names the prompt of prompts/get (gen_ai_prompt_name) and times the upstream call by upstream', async () => {
    const r = await call(4, 'prompts/get', { name: 'echo__greeting', arguments: { name: 'Ada' } });
    expect(r.json.result.messages).toHaveLength(1);
    const text = await scrape();
    expect(sample(text, SERVER_COUNT, server('prompts/get', { gen_ai_prompt_name: 'echo__greeting' }))).toBe(1);
    expect(
      sample(text, CLIENT_COUNT, {
        upstream: 'echo',
        mcp_method_name: 'prompts/get',
        gen_ai_tool_name: '',
        gen_ai_prompt_name: 'echo__greeting',
        error_type: '',
        network_transport: 'pipe',
      }),
    ).toBe(1);
  });

  it('records initialize and ping', async () => {
    const p = await call(6, 'ping');
    expect(p.json.result).toEqual({});
    const text = await scrape();
    expect(sample(text, SERVER_COUNT, server('initialize'))).toBeGreaterThanOrEqual(1);
    expect(sample(text, SERVER_COUNT, server('ping'))).toBe(1);
  });

  it('records how long a session lasted when it is deleted', async () => {
    const before = sample(await scrape(), 'mcp_server_session_duration_seconds_count', { network_transport: 'tcp' });
    const other = await openSession(gw.url);
    const res = await fetch(gw.url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': other, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(res.status).toBe(200);
    expect(sample(await scrape(), 'mcp_server_session_duration_seconds_count', { network_transport: 'tcp' })).toBe(
      before + 1,
    );
  });

  it('says which upstreams are up (mcpgw_upstream_up), one series per configured upstream', async () => {
    const text = await scrape();
    const up = (upstream: string) =>
      new RegExp(`^mcpgw_upstream_up\\{upstream="${upstream}"\\} (\\d)$`, 'm').exec(text)?.[1];
    expect(up('echo')).toBe('1');
    expect(up('slow')).toBe('1');
    expect(up('down')).toBe('0');
    expect(text.split('\n').filter((l) => l.startsWith('mcpgw_upstream_up{'))).toHaveLength(3);
  });

  it('exports no session store gauges for the memory store', async () => {
    const text = await scrape();
    expect(text).not.toContain('mcpgw_session_store_up');
    expect(text).not.toContain('mcpgw_session_store_failing_masters');
  });

  // Last: the crash restarts slow's worker.
  it('records a failed upstream call with its JSON-RPC code on the client side', async () => {
    const r = await call(7, 'tools/call', { name: 'slow__crash', arguments: {} });
    const code = String(r.json.error.code);
    expect(code).toMatch(/^-320\d\d$/);
    const text = await scrape();
    expect(
      sample(text, CLIENT_COUNT, {
        upstream: 'slow',
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'slow__crash',
        gen_ai_prompt_name: '',
        error_type: code,
        network_transport: 'pipe',
      }),
    ).toBe(1);
    expect(
      sample(text, SERVER_COUNT, server('tools/call', { gen_ai_tool_name: 'slow__crash', error_type: code })),
    ).toBe(1);
  });

  it('builds no tracing events when tracing is off (nobody subscribes to request:start or upstream:call-start)', () => {
    expect(eventChannel('request:start').hasSubscribers).toBe(false);
    expect(eventChannel('upstream:call-start').hasSubscribers).toBe(false);
    expect(eventChannel('upstream:call-end').hasSubscribers).toBe(true);
  });
});
