/**
 * MCP 2026-07-28 (stateless) requests on the same endpoint as 2025 sessions, over raw HTTP: the
 * request's own `_meta` and mirrored headers instead of a session, the spec's error codes and
 * statuses for each bad input, result shapes, progress, cancellation by closing the stream, and
 * subscriptions/listen. Real gateway, real stdio upstreams, loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import {
  ECHO_SERVER,
  MCP_HEADERS,
  ROOT,
  SLOW_SERVER,
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';
import { MODERN_META, MODERN_VERSION as VERSION, statelessRequest } from '../support/stateless.js';
import { SseReader, messagesOf } from '../support/sse.js';
import { readTap, tappedStdio } from '../support/stdio-tap.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

async function send(
  gw: RunningGateway,
  id: number | string,
  method: string,
  params?: Record<string, unknown>,
  extraHeaders: Record<string, string | undefined> = {},
) {
  const { body, headers } = statelessRequest(id, method, params);
  const merged: Record<string, string> = { ...headers };
  for (const [k, v] of Object.entries(extraHeaders)) {
    if (v === undefined) delete merged[k];
    else merged[k] = v;
  }
  return post(gw.url, body, merged);
}

let gw: RunningGateway;
let dir: string;
let tap: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-stateless-'));
  tap = join(dir, 'tap.log');
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('echo', ECHO_SERVER),
        stdioUpstream('slow', SLOW_SERVER, { ...tappedStdio(SLOW_SERVER, tap), pool: { min: 1, max: 1 } }),
        // A worker per client session, and per stateless request.
        stdioUpstream('mine', SLOW_SERVER, { mode: 'per-session' }),
      ],
      stateless: { listTtlMs: 5000, readTtlMs: 0 },
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('stateless requests (2026-07-28)', () => {
  it('server/discover: versions, capabilities, identity in _meta, cache hints; no session is made', async () => {
    const r = await send(gw, 1, 'server/discover');
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBeNull();
    expect(r.json.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: [VERSION],
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-gateway' } },
      ttlMs: 5000,
      cacheScope: 'public',
    });
    // No example upstream here offers resource subscriptions; log messages reach no stateless client.
    expect(r.json.result.capabilities.resources.subscribe).toBeUndefined();
    expect(r.json.result.capabilities.logging).toBeUndefined();
    expect(await gw.gateway.store.size()).toBe(0);
  });

  it('tools/list: every upstream, in the same order every time, with cache hints', async () => {
    const r = await send(gw, 2, 'tools/list');
    expect(r.status).toBe(200);
    const names = r.json.result.tools.map((t: { name: string }) => t.name);
    const slow = ['sleep', 'crash', 'hang', 'pid', 'fail'];
    expect(names).toEqual([
      'echo__echo',
      'echo__add',
      'echo__whoami',
      ...slow.map((t) => `mine__${t}`),
      ...slow.map((t) => `slow__${t}`),
    ]);
    expect(r.json.result).toMatchObject({ resultType: 'complete', ttlMs: 5000, cacheScope: 'public' });
    expect((await send(gw, 3, 'tools/list')).json.result.tools.map((t: { name: string }) => t.name)).toEqual(names);
  });

  it('a per-session upstream serves a stateless request on a worker of its own, stopped after the answer', async () => {
    const first = await send(gw, 4, 'tools/call', { name: 'mine__pid', arguments: {} });
    const second = await send(gw, 4, 'tools/call', { name: 'mine__pid', arguments: {} });
    const pids = [first, second].map((r) => JSON.parse(r.json.result.content[0].text).pid as number);
    expect(pids[0]).not.toBe(pids[1]);
    await until('both workers to stop', () => internals(gw.gateway.server).perSessionWorkers('mine') === 0, 5000);
    // A 2025 session on the same endpoint still gets the same tools, in 2025 shape.
    const sid = await openSession(gw.url, '2025-11-25');
    const r = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
    );
    expect(r.json.result.tools.map((t: { name: string }) => t.name)).toContain('mine__pid');
    expect(r.json.result.resultType).toBeUndefined();
  });

  it('tools/call: the upstream result with resultType and serverInfo; the client _meta does not reach the upstream', async () => {
    const r = await send(gw, 5, 'tools/call', { name: 'echo__echo', arguments: { text: 'stateless hello' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('application/json');
    expect(r.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'stateless hello' }],
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-gateway' } },
    });
    expect(r.json.result.ttlMs).toBeUndefined();

    await send(gw, 6, 'tools/call', {
      name: 'slow__pid',
      arguments: {},
      _meta: { progressToken: 'kept', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    const call = readTap(tap).find(
      (t) => t.dir === 'IN' && t.message.method === 'tools/call' && t.message.params?.name === 'pid',
    );
    expect(call).toBeDefined();
    const meta = call!.message.params._meta as Record<string, unknown>;
    expect(Object.keys(meta).filter((k) => k.startsWith('io.modelcontextprotocol/'))).toEqual([]);
    expect(meta.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
  });

  it('progress arrives on an SSE reply, then the result', async () => {
    const { body, headers } = statelessRequest(7, 'tools/call', {
      name: 'slow__sleep',
      arguments: { ms: 200, steps: 4 },
      _meta: { progressToken: 'p7' },
    });
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const events = await new SseReader(res).rest();
    // Nothing to resume in this revision: no event ids.
    expect(events.every((e) => e.id === undefined)).toBe(true);
    const messages = messagesOf(events);
    const progress = messages.filter((m) => m.method === 'notifications/progress');
    expect(progress.map((p) => p.params.progress)).toEqual([1, 2, 3, 4]);
    expect(progress.every((p) => p.params.progressToken === 'p7')).toBe(true);
    expect(messages.at(-1)).toMatchObject({
      id: 7,
      result: { resultType: 'complete', content: [{ text: 'slept 200ms' }] },
    });
  });

  it('closing the reply stream cancels the call upstream', async () => {
    const { body, headers } = statelessRequest('to-close', 'tools/call', {
      name: 'slow__sleep',
      arguments: { ms: 5000, steps: 50 },
      _meta: { progressToken: 'pc' },
    });
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });
    const reader = new SseReader(res);
    expect(JSON.parse((await reader.next())!.data).method).toBe('notifications/progress');
    await reader.cancel();
    await until('the gateway to drop the call', () => internals(gw.gateway.server).inFlight === 0, 5000);
    const lines = readTap(tap);
    const call = lines.find(
      (t) =>
        t.dir === 'IN' &&
        t.message.method === 'tools/call' &&
        t.message.params?._meta?.progressToken !== undefined &&
        t.message.params?.arguments?.ms === 5000,
    );
    expect(call).toBeDefined();
    await until('the upstream to hear of it', () =>
      readTap(tap).some(
        (t) =>
          t.dir === 'IN' &&
          t.message.method === 'notifications/cancelled' &&
          t.message.params?.requestId === call!.message.id,
      ),
    );
    // The worker is free for the next call.
    expect((await send(gw, 8, 'tools/call', { name: 'slow__pid', arguments: {} })).json.result.content[0].text).toMatch(
      /pid/,
    );
  });

  it('resources/read: private cache hints; an unknown URI is -32602, as 2026-07-28 spells not found', async () => {
    const list = await send(gw, 9, 'resources/list');
    const uri = list.json.result.resources[0].uri as string;
    expect(list.json.result).toMatchObject({ ttlMs: 5000, cacheScope: 'public' });
    const r = await send(gw, 10, 'resources/read', { uri });
    expect(r.json.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    const missing = await send(gw, 11, 'resources/read', { uri: 'nowhere://x' });
    expect(missing.status).toBe(200);
    expect(missing.json.error).toMatchObject({
      code: -32602,
      data: { type: 'MODERN_RESOURCE_NOT_FOUND', uri: 'nowhere://x' },
    });
  });

  it('ignores Mcp-Session-Id: a stateless request is not a session request', async () => {
    const r = await send(gw, 12, 'tools/list', {}, { 'mcp-session-id': 'no-such-session' });
    expect(r.status).toBe(200);
    expect(r.json.result.tools.length).toBeGreaterThan(0);
  });
});

describe('stateless bad inputs: the spec code and status, and nothing else disturbed', () => {
  const cases: Array<{
    name: string;
    run: () => Promise<{ status: number; json: any }>;
    status: number;
    code: number;
    type: string;
  }> = [
    {
      name: 'unsupported version in _meta → 400 -32022 naming what is supported and what was asked',
      run: () =>
        post(
          gw.url,
          statelessRequest(20, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } })
            .body,
          { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
        ),
      status: 400,
      code: -32022,
      type: 'MODERN_UNSUPPORTED_VERSION',
    },
    {
      name: 'no client capabilities in _meta → 400 -32602',
      run: () =>
        post(
          gw.url,
          {
            jsonrpc: '2.0',
            id: 21,
            method: 'tools/list',
            params: { _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION } },
          },
          { 'mcp-protocol-version': VERSION, 'mcp-method': 'tools/list' },
        ),
      status: 400,
      code: -32602,
      type: 'MODERN_META_INVALID',
    },
    {
      name: 'a bad log level in _meta → 400 -32602',
      run: () =>
        post(
          gw.url,
          statelessRequest(22, 'tools/list', { _meta: { 'io.modelcontextprotocol/logLevel': 'loud' } }).body,
          {
            'mcp-protocol-version': VERSION,
            'mcp-method': 'tools/list',
          },
        ),
      status: 400,
      code: -32602,
      type: 'MODERN_META_INVALID',
    },
    {
      name: 'the 2026 version header with no _meta → 400 -32602',
      run: () =>
        post(
          gw.url,
          { jsonrpc: '2.0', id: 23, method: 'tools/list' },
          { 'mcp-protocol-version': VERSION, 'mcp-method': 'tools/list' },
        ),
      status: 400,
      code: -32602,
      type: 'MODERN_META_INVALID',
    },
    {
      name: 'no MCP-Protocol-Version header → 400 -32020',
      run: () => send(gw, 24, 'tools/list', {}, { 'mcp-protocol-version': undefined }),
      status: 400,
      code: -32020,
      type: 'HEADER_MISMATCH',
    },
    {
      name: 'MCP-Protocol-Version differs from _meta → 400 -32020',
      run: () => send(gw, 25, 'tools/list', {}, { 'mcp-protocol-version': '2025-11-25' }),
      status: 400,
      code: -32020,
      type: 'HEADER_MISMATCH',
    },
    {
      name: 'no Mcp-Method header → 400 -32020',
      run: () => send(gw, 26, 'tools/list', {}, { 'mcp-method': undefined }),
      status: 400,
      code: -32020,
      type: 'HEADER_MISMATCH',
    },
    {
      name: 'Mcp-Method differs from the body → 400 -32020',
      run: () => send(gw, 27, 'tools/list', {}, { 'mcp-method': 'prompts/list' }),
      status: 400,
      code: -32020,
      type: 'HEADER_MISMATCH',
    },
    {
      name: 'Mcp-Name differs from the tool name → 400 -32020',
      run: () =>
        send(gw, 28, 'tools/call', { name: 'echo__echo', arguments: { text: 'x' } }, { 'mcp-name': 'slow__crash' }),
      status: 400,
      code: -32020,
      type: 'HEADER_MISMATCH',
    },
    {
      name: 'no Mcp-Name on resources/read → 400 -32020',
      run: () => send(gw, 29, 'resources/read', { uri: 'echo://x' }, { 'mcp-name': undefined }),
      status: 400,
      code: -32020,
      type: 'HEADER_MISMATCH',
    },
    {
      name: 'a method removed in 2026-07-28 (ping) → 404 -32601',
      run: () => send(gw, 30, 'ping'),
      status: 404,
      code: -32601,
      type: 'MODERN_METHOD_NOT_FOUND',
    },
    {
      name: 'initialize with a stateless _meta → 404 -32601',
      run: () => send(gw, 31, 'initialize', { protocolVersion: VERSION, capabilities: {} }),
      status: 404,
      code: -32601,
      type: 'MODERN_METHOD_NOT_FOUND',
    },
    {
      name: 'resources/subscribe (replaced by listen) → 404 -32601',
      run: () => send(gw, 32, 'resources/subscribe', { uri: 'echo://x' }),
      status: 404,
      code: -32601,
      type: 'MODERN_METHOD_NOT_FOUND',
    },
    {
      name: 'an unknown method → 404 -32601',
      run: () => send(gw, 33, 'tools/explode'),
      status: 404,
      code: -32601,
      type: 'MODERN_METHOD_NOT_FOUND',
    },
    {
      name: 'a stateless request inside a batch → 400 -32600',
      run: () => post(gw.url, [statelessRequest(34, 'tools/list').body], { 'mcp-protocol-version': '2025-03-26' }),
      status: 400,
      code: -32600,
      type: 'INVALID_REQUEST',
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const r = await c.run();
      expect(r.status).toBe(c.status);
      expect(r.json.error.code).toBe(c.code);
      expect(r.json.error.data.type).toBe(c.type);
      // The gateway is fine, and so is everyone else.
      expect(
        (await send(gw, 'after', 'tools/call', { name: 'echo__echo', arguments: { text: 'ok' } })).json.result
          .content[0].text,
      ).toBe('ok');
    });
  }

  it('-32022 data lists the stateless versions (as server/discover does) and echoes the one asked for', async () => {
    const r = await post(
      gw.url,
      statelessRequest(40, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }).body,
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
    );
    expect(r.json.error.data).toMatchObject({ supported: [VERSION], requested: '2099-01-01' });
  });

  it('a version header that disagrees with _meta is a mismatch (-32020) even when _meta names an unknown version', async () => {
    const r = await post(
      gw.url,
      statelessRequest(43, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } }).body,
      { 'mcp-protocol-version': VERSION, 'mcp-method': 'tools/list' },
    );
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: -32020, data: { type: 'HEADER_MISMATCH' } });
  });

  it('a base64 sentinel in Mcp-Name is decoded before comparing', async () => {
    const name = 'echo__echo';
    const ok = await send(
      gw,
      41,
      'tools/call',
      { name, arguments: { text: 'b64' } },
      { 'mcp-name': `=?base64?${Buffer.from(name).toString('base64')}?=` },
    );
    expect(ok.json.result.content[0].text).toBe('b64');
    const bad = await send(
      gw,
      42,
      'tools/call',
      { name, arguments: { text: 'b64' } },
      { 'mcp-name': `=?base64?${Buffer.from('other').toString('base64')}?=` },
    );
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe(-32020);
  });

  it('GET and DELETE under the 2026 version header → 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(gw.url, {
        method,
        headers: { accept: 'text/event-stream', 'mcp-protocol-version': VERSION },
      });
      expect(res.status).toBe(405);
      expect(((await res.json()) as any).error.data.type).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('a notification under the 2026 version header is accepted (202) and changes nothing', async () => {
    const r = await post(
      gw.url,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nothing', _meta: MODERN_META } },
      { 'mcp-protocol-version': VERSION, 'mcp-method': 'notifications/cancelled' },
    );
    expect(r.status).toBe(202);
  });
});

describe('subscriptions/listen', () => {
  it('acknowledges what it honours, then delivers list changes tagged with the listen id', async () => {
    const { body, headers } = statelessRequest('listen-1', 'subscriptions/listen', {
      notifications: { toolsListChanged: true, resourceSubscriptions: ['echo://x'] },
    });
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = new SseReader(res);
    const ack = JSON.parse((await reader.next())!.data);
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
        notifications: { toolsListChanged: true },
      },
    });
    // What a list change of any upstream does (a per-session upstream's worker reports it so).
    gw.gateway.server.listChanged('echo', 'notifications/prompts/list_changed', 'a-session');
    gw.gateway.server.listChanged('echo', 'notifications/tools/list_changed', 'a-session');
    const change = JSON.parse((await reader.next())!.data);
    // prompts were not asked for: only the tools change arrives.
    expect(change).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } },
    });
    await reader.cancel();
  });

  /** A listen's reply: its JSON, or (a stream opened) only its content type, the stream cancelled. */
  async function listenReply(
    id: string,
    params: Record<string, unknown>,
  ): Promise<{ status: number; type: string; json?: any }> {
    const { body, headers } = statelessRequest(id, 'subscriptions/listen', params);
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });
    const type = res.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream')) {
      await res.body?.cancel();
      return { status: res.status, type };
    }
    return { status: res.status, type, json: await res.json() };
  }

  const listensOpen = async () =>
    Number(
      /^mcpgw_sse_streams_open\{kind="listen"\} (\d+)$/m.exec(
        await (await fetch(new URL('/metrics', gw.base))).text(),
      )?.[1] ?? 0,
    );

  it("a filter (params.notifications) missing or not of the spec's shape: -32602 naming the field, no stream opened or held", async () => {
    await until('no listen stream open', async () => (await listensOpen()) === 0);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ filter: 0 }, 'params.notifications is required'],
      [{ filter: true }, 'params.notifications is required'],
      [{ filter: 'x' }, 'params.notifications is required'],
      [{}, 'params.notifications is required'],
      [{ notifications: 0 }, 'params.notifications must be object'],
      [{ notifications: true }, 'params.notifications must be object'],
      [{ notifications: 'x' }, 'params.notifications must be object'],
      [{ notifications: [] }, 'params.notifications must be object'],
      [{ notifications: { toolsListChanged: 'yes' } }, 'params.notifications.toolsListChanged must be boolean'],
      [{ notifications: { promptsListChanged: 1 } }, 'params.notifications.promptsListChanged must be boolean'],
      [
        { notifications: { resourceSubscriptions: 'echo://x' } },
        'params.notifications.resourceSubscriptions must be array',
      ],
      [
        { notifications: { resourceSubscriptions: [7] } },
        'params.notifications.resourceSubscriptions.0 must be string',
      ],
    ];
    for (const [params, problem] of cases) {
      const r = await listenReply('bad-listen', params);
      expect(r.type, JSON.stringify(params)).toMatch(/^application\/json/);
      expect(r.status).toBe(200);
      expect(r.json).toEqual({
        jsonrpc: '2.0',
        id: 'bad-listen',
        error: { code: -32602, message: `Invalid params: ${problem}`, data: { type: 'INVALID_PARAMS' } },
      });
    }
    expect(await listensOpen()).toBe(0);
    // Another client's listen and call go on.
    const good = await listenReply('good-listen', { notifications: { toolsListChanged: true } });
    expect(good.type).toMatch(/^text\/event-stream/);
    const r = await send(gw, 'after', 'tools/call', { name: 'echo__echo', arguments: { text: 'still here' } });
    expect(r.json.result.content[0].text).toBe('still here');
    await until('the good listen stream to close', async () => (await listensOpen()) === 0);
  });
});

/** One tool whose arguments carry `x-mcp-header` annotations: 2026-07-28 clients mirror them into Mcp-Param-* headers. */
const HEADER_TOOL_SERVER = rawStdioServer(
  `return m.method === 'initialize' ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hdr', version: '1' } }
    : m.method === 'tools/list' ? { tools: [tool] }
    : m.method === 'tools/call' ? { content: [{ type: 'text', text: JSON.stringify(m.params.arguments) }] }
    : {};`,
  `const tool = { name: 'route', inputSchema: { type: 'object', properties: {
  region: { type: 'string', 'x-mcp-header': 'Region' },
  shard: { type: 'integer', 'x-mcp-header': 'Shard' },
  dryRun: { type: 'boolean', 'x-mcp-header': 'DryRun' },
  options: { type: 'object', properties: { tenant: { type: 'string', 'x-mcp-header': 'Tenant' } } },
  weight: { type: 'number', 'x-mcp-header': 'Weight' },
} } };`,
);

describe('Mcp-Param-* headers of x-mcp-header arguments', () => {
  let hgw: RunningGateway;

  beforeAll(async () => {
    hgw = await startGateway(
      exampleConfig({
        upstreams: [
          { name: 'hdr', transport: 'stdio', command: process.execPath, args: ['-e', HEADER_TOOL_SERVER], prefix: '' },
        ],
      }),
    );
  });

  afterAll(async () => {
    await hgw?.stop();
  });

  const call = (args: Record<string, unknown>, headers: Record<string, string>) =>
    send(hgw, 'h', 'tools/call', { name: 'route', arguments: args }, headers);

  it('a call whose headers mirror its arguments goes through (integers compared as numbers, base64 decoded)', async () => {
    const r = await call(
      { region: 'eu-west', shard: 42, dryRun: false, options: { tenant: 'Zürich' } },
      {
        'mcp-param-region': 'eu-west',
        'mcp-param-shard': '42.0',
        'mcp-param-dryrun': 'false',
        'mcp-param-tenant': `=?base64?${Buffer.from('Zürich').toString('base64')}?=`,
      },
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.json.result.content[0].text)).toEqual({
      region: 'eu-west',
      shard: 42,
      dryRun: false,
      options: { tenant: 'Zürich' },
    });
  });

  it('arguments that are absent need no header; a `number` annotation is not one the spec allows, so it is not checked', async () => {
    const r = await call({ weight: 1.5 }, {});
    expect(r.status).toBe(200);
  });

  for (const [name, args, headers] of [
    ['a missing header for a present argument', { region: 'eu-west' }, {}],
    ['a header that differs from the argument', { region: 'eu-west' }, { 'mcp-param-region': 'us-east' }],
    ['an integer header that is not that number', { shard: 42 }, { 'mcp-param-shard': '43' }],
    ['a boolean header spelled otherwise', { dryRun: true }, { 'mcp-param-dryrun': 'TRUE' }],
    ['a nested argument without its header', { options: { tenant: 't1' } }, {}],
    ['a base64 sentinel with bad padding', { region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' }],
    [
      'a base64 sentinel with characters outside the alphabet',
      { region: 'Hello' },
      { 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' },
    ],
  ] as const) {
    it(`${name} → 400 -32020, and the gateway goes on`, async () => {
      const r = await call(args, headers);
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: -32020, data: { type: 'HEADER_MISMATCH' } });
      expect(r.json.id).toBe('h');
      expect((await call({}, {})).status).toBe(200);
    });
  }
});

describe('subscriptions/listen with resource subscriptions', () => {
  let fgw: RunningGateway;

  beforeAll(async () => {
    fgw = await startGateway(
      exampleConfig({
        upstreams: [stdioUpstream('fx', resolve(ROOT, 'examples/conformance/server.mjs'), { prefix: '' })],
      }),
    );
  });

  afterAll(async () => {
    await fgw?.stop();
  });

  it('follows the resources a shared upstream can watch, acknowledges only those, and relays their updates tagged', async () => {
    const discover = (await send(fgw, 1, 'server/discover')).json.result;
    expect(discover.capabilities.resources.subscribe).toBe(true);
    const { body, headers } = statelessRequest('listen-r', 'subscriptions/listen', {
      notifications: { resourceSubscriptions: ['test://watched-resource', 'nowhere://unknown'] },
    });
    const res = await fetch(fgw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });
    const reader = new SseReader(res);
    const ack = JSON.parse((await reader.next())!.data);
    expect(ack.params.notifications).toEqual({ resourceSubscriptions: ['test://watched-resource'] });

    const touched = await send(fgw, 2, 'tools/call', {
      name: 'test_touch_resource',
      arguments: { uri: 'test://watched-resource' },
    });
    expect(touched.json.result.content[0].text).toBe('updated test://watched-resource');
    const update = JSON.parse((await reader.next())!.data);
    expect(update).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'test://watched-resource', _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-r' } },
    });
    await reader.cancel();
    await until('the gateway to drop the closed listen stream', async () =>
      /^mcpgw_sse_streams_open\{kind="listen"\} 0$/m.test(
        await fetch(new URL('/metrics', fgw.base)).then((r) => r.text()),
      ),
    );
    // An update now reaches nobody, and breaks nothing.
    expect(
      (await send(fgw, 3, 'tools/call', { name: 'test_touch_resource', arguments: { uri: 'test://watched-resource' } }))
        .status,
    ).toBe(200);
  });
});

/**
 * A per-session server with one resource, `clock://tick`, whose subscribers hear an update every
 * 100 ms (and a log message each time, which a listen stream must not relay). Each process counts
 * its updates and names its pid, so a stream can tell whose they are.
 */
const CLOCK_SERVER = rawStdioServer(
  `if (m.method === 'resources/subscribe' && !timer) {
    timer = setInterval(() => {
      n++;
      send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'tick ' + n } });
      send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'clock://tick', title: 'update ' + n + ' of ' + process.pid } });
    }, 100);
  }
  return m.method === 'initialize' ? { protocolVersion: m.params.protocolVersion, capabilities: { resources: { subscribe: true }, logging: {} }, serverInfo: { name: 'clock', version: '1' } }
    : m.method === 'resources/list' ? { resources: [{ uri: 'clock://tick', name: 'tick' }] }
    : {};`,
  'let timer;\nlet n = 0;',
);

describe('subscriptions/listen with resources of a per-session upstream', () => {
  let cgw: RunningGateway;

  beforeAll(async () => {
    cgw = await startGateway(
      exampleConfig({
        upstreams: [
          {
            name: 'clock',
            transport: 'stdio',
            command: process.execPath,
            args: ['-e', CLOCK_SERVER],
            prefix: '',
            mode: 'per-session',
            pool: { spares: 0 },
          },
        ],
      }),
    );
  });

  afterAll(async () => {
    await cgw?.stop();
  });

  const workers = async () =>
    Number(
      /^mcpgw_upstream_workers\{upstream="clock"\} (\d+)$/m.exec(
        await fetch(new URL('/metrics', cgw.base)).then((r) => r.text()),
      )?.[1] ?? 0,
    );

  async function listenTo(id: string): Promise<SseReader> {
    const { body, headers } = statelessRequest(id, 'subscriptions/listen', {
      notifications: { resourceSubscriptions: ['clock://tick'] },
    });
    const res = await fetch(cgw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const reader = new SseReader(res);
    expect(JSON.parse((await reader.next())!.data).params.notifications).toEqual({
      resourceSubscriptions: ['clock://tick'],
    });
    return reader;
  }

  it('discover offers subscribe; each listen stream gets its own worker, hears only its updates (no log messages), and the worker stops with the stream', async () => {
    expect((await send(cgw, 1, 'server/discover')).json.result.capabilities.resources.subscribe).toBe(true);
    const before = await workers();
    const [one, two] = [await listenTo('listen-a'), await listenTo('listen-b')];
    const updatesOf = async (reader: SseReader, id: string) => {
      const seen: Array<{ method: string; params: { uri: string; title: string; _meta: Record<string, unknown> } }> =
        [];
      for (let i = 0; i < 3; i++) seen.push(JSON.parse((await reader.next())!.data));
      for (const m of seen) {
        expect(m.method).toBe('notifications/resources/updated');
        expect(m.params.uri).toBe('clock://tick');
        expect(m.params._meta['io.modelcontextprotocol/subscriptionId']).toBe(id);
      }
      return seen.map((m) => m.params.title.split(' of ')[1]);
    };
    const pidsA = new Set(await updatesOf(one, 'listen-a'));
    const pidsB = new Set(await updatesOf(two, 'listen-b'));
    // One process per stream: never each other's updates.
    expect(pidsA.size).toBe(1);
    expect(pidsB.size).toBe(1);
    expect([...pidsA][0]).not.toBe([...pidsB][0]);
    expect(await workers()).toBe(before + 2);

    await one.cancel();
    await until("the first stream's worker to stop", async () => (await workers()) === before + 1);
    // The other stream goes on.
    expect(new Set(await updatesOf(two, 'listen-b'))).toEqual(pidsB);
    await two.cancel();
    await until('every listen worker to stop', async () => (await workers()) === before);
  });
});
