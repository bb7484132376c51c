/**
 * StreamableHttpTransport as a module: the endpoint alone on a Fastify app listening on
 * 127.0.0.1, over a real MemorySessionStore, SessionStreams and ListenStreams. The McpHandler it
 * takes (the seam to the virtual server) is a small one here that records what the transport
 * hands it and answers each request with what it got, or holds it until the test lets it go.
 * What the transport decides itself: sessions (initialize, the header, DELETE), the door
 * (origin, readiness, draining), media types, per-client in-flight bounds, params checked before
 * the handler, batches by revision, the GET stream, and a stateless request's own scope.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBus } from '../../src/cluster/memory-bus.js';
import type { RequestContext } from '../../src/contracts/request-context.js';
import type { McpHandler } from '../../src/contracts/mcp-handler.js';
import { errorObject, type ErrorName } from '../../src/jsonrpc/errors.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../src/jsonrpc/messages.js';
import { ListenStreams } from '../../src/stateless/listen-streams.js';
import { createOriginCheck } from '../../src/server/origin.js';
import { MemorySessionStore } from '../../src/session/memory-store.js';
import { MemoryEventStore } from '../../src/streams/memory-event-store.js';
import { SessionStreams } from '../../src/streams/session-streams.js';
import { StreamServices } from '../../src/streams/stream-services.js';
import { registerStreamableHttp } from '../../src/transport/streamable-http.js';
import { MCP_HEADERS, exampleConfig, post } from '../support/gateway.js';
import { quietLog, recordEvents, type RecordedEvents } from '../support/in-process.js';
import { statelessRequest } from '../support/stateless.js';
import { until } from '../support/wait.js';

/** Records what it is handed; `test/hold` requests (and calls of a tool `hold`) answer once released. */
class RecordingHandler implements McpHandler {
  readonly requests: Array<{ ctx: RequestContext; request: JsonRpcRequest }> = [];
  readonly notifications: JsonRpcNotification[] = [];
  readonly responses: JsonRpcResponse[] = [];
  readonly released: string[] = [];
  readonly #held = new Map<string, () => void>();

  initialize(params: Record<string, unknown> | undefined) {
    const protocolVersion = String(params?.protocolVersion);
    return {
      protocolVersion,
      result: { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'recording', version: '1' } },
    };
  }

  capabilities() {
    return { tools: {} };
  }

  mirroredParams() {
    return [];
  }

  exposedTool(name: string) {
    return name;
  }

  async handleRequest(ctx: RequestContext, request: JsonRpcRequest): Promise<JsonRpcResponse> {
    this.requests.push({ ctx, request });
    if (request.method === 'test/hold' || request.params?.name === 'hold')
      await new Promise<void>((resolve) => this.#held.set(String(request.id), resolve));
    return { jsonrpc: '2.0', id: request.id, result: { method: request.method, scope: ctx.scope } };
  }

  handleNotification(_ctx: RequestContext, n: JsonRpcNotification) {
    this.notifications.push(n);
  }

  handleResponse(_ctx: RequestContext, r: JsonRpcResponse) {
    this.responses.push(r);
  }

  watchResources() {
    return [];
  }

  async watchTasks() {
    return [];
  }

  releaseScope(scope: string) {
    this.released.push(scope);
  }

  /** Lets the held request `id` answer. */
  release(id: string | number) {
    this.#held.get(String(id))?.();
  }

  get holding(): number {
    return this.#held.size;
  }
}

interface Endpoint {
  url: URL;
  handler: RecordingHandler;
  store: MemorySessionStore;
  events: RecordedEvents;
  state: { ready: boolean; draining: boolean };
}

const LIMITS = exampleConfig().limits;
const log = quietLog();
let app: FastifyInstance | undefined;
let closers: Array<() => unknown> = [];

async function endpoint(options: { maxInFlightPerClient?: number } = {}): Promise<Endpoint> {
  const events = recordEvents(['transport:rejection']);
  const { diagnostics } = events;
  const handler = new RecordingHandler();
  const store = new MemorySessionStore({ ttlSeconds: 60 });
  const bus = new MemoryBus();
  const services = new StreamServices({
    events: new MemoryEventStore({ maxEvents: 100, maxAgeMs: 60_000 }),
    bus,
    retryMs: 1000,
    diagnostics,
    log,
  });
  const streams = new SessionStreams({ keepAliveMs: 15_000, services, distributed: false, retainMs: 60_000 });
  const listens = new ListenStreams(15_000);
  const state = { ready: true, draining: false };
  app = Fastify();
  registerStreamableHttp(app, {
    path: '/mcp',
    bodyLimit: LIMITS.bodyBytes,
    intake: { maxDepth: LIMITS.maxJsonDepth, maxBatch: LIMITS.maxBatchSize },
    maxInFlightPerClient: options.maxInFlightPerClient ?? 0,
    maxStreams: 10,
    maxStreamBufferedBytes: LIMITS.maxStreamBufferedBytes,
    handler,
    store,
    streams,
    listens,
    isAllowedOrigin: createOriginCheck([]),
    diagnostics,
    isDraining: () => state.draining,
    isReady: () => state.ready,
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  closers = [() => streams.closeAll(), () => store.close(), () => bus.close(), () => events.stop()];
  return { url: new URL('/mcp', address), handler, store, events, state };
}

afterEach(async () => {
  await app?.close();
  for (const close of closers) await close();
  app = undefined;
});

const PROTOCOL = '2025-06-18';
const code = (name: ErrorName) => errorObject(name).code;
const initialize = (protocolVersion = PROTOCOL, capabilities: Record<string, unknown> = { sampling: {} }) => ({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion, capabilities, clientInfo: { name: 'transport-test', version: '1' } },
});

async function openSession(e: Endpoint, protocolVersion = PROTOCOL): Promise<Record<string, string>> {
  const res = await post(e.url, initialize(protocolVersion));
  const sid = res.headers.get('mcp-session-id');
  if (res.status !== 200 || !sid) throw new Error(`initialize: ${res.status} ${res.text}`);
  return { 'mcp-session-id': sid, 'mcp-protocol-version': protocolVersion };
}

describe('StreamableHttpTransport sessions', () => {
  it('initialize opens a session in the store with what the client said, and answers the handler’s result', async () => {
    const e = await endpoint();
    const res = await post(e.url, initialize());
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      jsonrpc: '2.0',
      id: 0,
      result: {
        protocolVersion: PROTOCOL,
        capabilities: { tools: {} },
        serverInfo: { name: 'recording', version: '1' },
      },
    });
    const sid = res.headers.get('mcp-session-id')!;
    expect(await e.store.get(sid)).toMatchObject({
      id: sid,
      protocolVersion: PROTOCOL,
      clientCapabilities: { sampling: {} },
      clientInfo: { name: 'transport-test' },
    });
    // The handler sees no request for it: the transport opened the session.
    expect(e.handler.requests).toEqual([]);
  });

  it("a session's request reaches the handler with the session's context, and its answer is the reply", async () => {
    const e = await endpoint();
    const headers = await openSession(e);
    const sid = headers['mcp-session-id']!;
    const res = await post(e.url, { jsonrpc: '2.0', id: 'r1', method: 'tools/list', params: {} }, headers);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 'r1', result: { method: 'tools/list', scope: sid } });
    const [{ ctx }] = e.handler.requests;
    expect(ctx).toMatchObject({
      stateless: false,
      scope: sid,
      client: sid,
      protocolVersion: PROTOCOL,
      clientCapabilities: { sampling: {} },
    });
  });

  it('notifications and responses alone are accepted (202) and handed over; nothing is answered', async () => {
    const e = await endpoint();
    const headers = await openSession(e);
    const batch = await post(e.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    expect(batch.status).toBe(202);
    const response = await post(e.url, { jsonrpc: '2.0', id: 'up-1', result: { ok: true } }, headers);
    expect(response.status).toBe(202);
    expect(e.handler.notifications.map((n) => n.method)).toEqual(['notifications/initialized']);
    expect(e.handler.responses).toEqual([{ jsonrpc: '2.0', id: 'up-1', result: { ok: true } }]);
    expect(e.handler.requests).toEqual([]);
  });

  it('refuses a request without a session id (400) or with an unknown one (404), before the handler', async () => {
    const e = await endpoint();
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const missing = await post(e.url, ping, { 'mcp-protocol-version': PROTOCOL });
    expect([missing.status, missing.json.error.code]).toEqual([400, code('SESSION_ID_REQUIRED')]);
    const unknown = await post(e.url, ping, { 'mcp-session-id': randomUUID(), 'mcp-protocol-version': PROTOCOL });
    expect([unknown.status, unknown.json.error.code]).toEqual([404, code('SESSION_NOT_FOUND')]);
    expect(e.handler.requests).toEqual([]);
  });

  it('DELETE ends the session: the handler releases its scope, and the id is unknown from then on', async () => {
    const e = await endpoint();
    const headers = await openSession(e);
    const res = await fetch(e.url, { method: 'DELETE', headers });
    expect(res.status).toBe(200);
    await res.text();
    expect(e.handler.released).toEqual([headers['mcp-session-id']]);
    expect((await post(e.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, headers)).status).toBe(404);
  });

  it('checks params and batches itself: the handler never sees what the revision does not allow', async () => {
    const e = await endpoint();
    const headers = await openSession(e);
    const bad = await post(e.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } }, headers);
    expect(bad.json.error).toMatchObject({ code: code('INVALID_PARAMS') });
    const batch = await post(e.url, [{ jsonrpc: '2.0', id: 2, method: 'ping' }], headers);
    expect([batch.status, batch.json.error.code]).toEqual([400, code('BATCH_NOT_SUPPORTED')]);
    expect(e.handler.requests).toEqual([]);
  });
});

describe('StreamableHttpTransport door and bounds', () => {
  it('refuses a foreign origin, the wrong media types, and every request while not ready or draining', async () => {
    const e = await endpoint();
    const init = initialize();
    expect((await post(e.url, init, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(e.url, init, { accept: 'application/json' })).status).toBe(406);
    expect((await post(e.url, JSON.stringify(init), { 'content-type': 'text/plain' })).status).toBe(415);
    e.state.ready = false;
    const starting = await post(e.url, init);
    expect([starting.status, starting.headers.get('retry-after'), starting.json.error.code]).toEqual([
      503,
      '1',
      code('NOT_READY'),
    ]);
    e.state.ready = true;
    e.state.draining = true;
    expect((await post(e.url, init)).json.error.code).toBe(code('SHUTTING_DOWN'));
    expect(await e.store.size()).toBe(0);
  });

  it("past a session's in-flight share a request is answered 429 at once; a freed place serves again", async () => {
    const e = await endpoint({ maxInFlightPerClient: 1 });
    const headers = await openSession(e);
    const held = post(e.url, { jsonrpc: '2.0', id: 'h1', method: 'test/hold' }, headers);
    await until('the first request is held', () => e.handler.holding === 1);
    const refused = await post(e.url, { jsonrpc: '2.0', id: 'h2', method: 'ping' }, headers);
    expect([refused.status, refused.json.error.code]).toEqual([429, code('CLIENT_TOO_MANY_IN_FLIGHT')]);
    expect(e.events.of('transport:rejection')).toEqual([
      expect.objectContaining({ errorType: 'CLIENT_TOO_MANY_IN_FLIGHT' }),
    ]);
    // Another session has a share of its own.
    const other = await openSession(e);
    expect((await post(e.url, { jsonrpc: '2.0', id: 'o1', method: 'ping' }, other)).status).toBe(200);
    e.handler.release('h1');
    expect((await held).json.result).toMatchObject({ method: 'test/hold' });
    expect((await post(e.url, { jsonrpc: '2.0', id: 'h3', method: 'ping' }, headers)).status).toBe(200);
  });

  it('opens one GET stream per session; a second is a conflict (409)', async () => {
    const e = await endpoint();
    const headers = await openSession(e);
    const abort = new AbortController();
    const stream = await fetch(e.url, { headers: { ...headers, accept: 'text/event-stream' }, signal: abort.signal });
    expect([stream.status, stream.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    const second = await fetch(e.url, { headers: { ...headers, accept: 'text/event-stream' } });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: number } }).error.code).toBe(code('STREAM_CONFLICT'));
    abort.abort();
  });
});

describe('StreamableHttpTransport stateless requests', () => {
  it('a 2026-07-28 request gets a scope of its own; closing its reply releases that scope', async () => {
    const e = await endpoint();
    const { body, headers } = statelessRequest(1, 'tools/list');
    const res = await post(e.url, body, headers);
    expect(res.status).toBe(200);
    const [{ ctx }] = e.handler.requests;
    expect(ctx).toMatchObject({ stateless: true, protocolVersion: '2026-07-28', clientInfo: { name: 'modern-test' } });
    expect(res.json.result.scope).toBe(ctx.scope);
    expect(e.handler.released).toEqual([]);
    // A held one whose client goes away: the transport releases its scope, which cancels it.
    const held = statelessRequest(2, 'tools/call', { name: 'hold', arguments: {} });
    const abort = new AbortController();
    const pending = fetch(e.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...held.headers },
      body: JSON.stringify(held.body),
      signal: abort.signal,
    }).catch(() => undefined);
    await until('the request is held', () => e.handler.holding === 1);
    const scope = e.handler.requests[1]!.ctx.scope;
    expect(scope).not.toBe(ctx.scope);
    abort.abort();
    await pending;
    await until('its scope was released', () => e.handler.released.includes(scope));
    e.handler.release(2);
  });
});
