/**
 * The Dispatcher as a module, with the parts the virtual server gives it built here around it:
 * the UpstreamGroup of a config (real stdio child processes: the echo example, the held server
 * whose calls end when the test releases them, a per-session server whose tools depend on the
 * client's capabilities), the real CatalogManager, PerSessionRouter and the rest, one in-process
 * bus. Requests as a transport hands them over (a RequestContext, a JSON-RPC request); what it
 * publishes (request:end, upstream calls) read from its own event channel.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/contracts/request-context.js';
import { MemoryBus } from '../../src/cluster/memory-bus.js';
import { LocalOwnerRegistry } from '../../src/cluster/owner-registry.js';
import { publishRemoteCancel } from '../../src/cluster/remote-cancel.js';
import { CANCEL_CHANNEL, decodeRemoteCancel } from '../../src/cluster/bus-messages.js';
import { Capabilities } from '../../src/gateway/capabilities.js';
import { CatalogManager } from '../../src/gateway/catalog-manager.js';
import { Dispatcher } from '../../src/gateway/dispatcher.js';
import { PerSessionRouter } from '../../src/gateway/per-session-router.js';
import { NotificationEvents } from '../../src/gateway/request-events.js';
import { ResourceUris } from '../../src/gateway/resource-uris.js';
import { Subscriptions } from '../../src/gateway/subscriptions.js';
import { TaskPassThrough } from '../../src/tasks/pass-through.js';
import { errorObject, type ErrorName } from '../../src/jsonrpc/errors.js';
import type { JsonRpcResponse } from '../../src/jsonrpc/messages.js';
import { StatelessResults } from '../../src/stateless/result-shape.js';
import { UpstreamRounds } from '../../src/stateless/upstream-rounds.js';
import type { UpstreamGroup } from '../../src/upstream/group.js';
import { capabilityToolsUpstream } from '../support/capability-tools.js';
import { ECHO_SERVER, stdioUpstream } from '../support/gateway.js';
import { heldServer } from '../support/held-server.js';
import {
  GATEWAY_IDENTITY,
  configWith,
  quietLog,
  quietPeer,
  recordEvents,
  recordingSink,
  sessionContext,
  upstreamGroup,
  type RecordedEvents,
} from '../support/in-process.js';
import { until } from '../support/wait.js';

const log = quietLog();
const held = heldServer();
const SERVER_INFO = { name: 'mcp-gateway', version: 'test' };
const UPSTREAMS = [
  stdioUpstream('echo', ECHO_SERVER),
  { name: 'held', transport: 'stdio', command: held.command, args: held.args, prefix: 'h' },
  capabilityToolsUpstream('caps'),
];

interface Parts {
  dispatcher: Dispatcher;
  group: UpstreamGroup;
  bus: MemoryBus;
  catalogs: CatalogManager;
  events: RecordedEvents;
  close(): Promise<void>;
}

let parts: Parts | undefined;

/** The dispatcher over UPSTREAMS, started, as VirtualServer builds it (no virtual servers, no tasks). */
async function dispatcher(pageSize = 100): Promise<Parts> {
  const events = recordEvents(['request:end', 'upstream:call-start', 'upstream:call-end']);
  const { diagnostics } = events;
  const bus = new MemoryBus();
  let router: PerSessionRouter | undefined;
  const group = upstreamGroup(configWith(UPSTREAMS).upstreams, {
    diagnostics,
    peers: { shared: () => quietPeer(), perSession: (u, scope) => router!.peer(u, scope) },
  });
  const notifications = new NotificationEvents(diagnostics, () => 'pipe');
  router = new PerSessionRouter({
    upstreams: group.perSession(),
    owners: new LocalOwnerRegistry(bus.replicaId),
    bus,
    log,
    onListChanged: () => undefined,
    notifications,
    inputWaitMs: 30_000,
  });
  const catalogs = new CatalogManager({ upstreams: group.upstreams, probeIdentity: GATEWAY_IDENTITY, log });
  const uris = new ResourceUris(group.upstreams);
  const d = new Dispatcher({
    upstreams: group.upstreams,
    perSession: router,
    bus,
    catalogs,
    capabilities: new Capabilities(group.upstreams, SERVER_INFO),
    subscriptions: new Subscriptions({ upstreams: group.upstreams, catalogs, perSession: router, uris, log }),
    uris,
    statelessResults: new StatelessResults({ serverInfo: SERVER_INFO, caching: { listTtlMs: 0, readTtlMs: 0 } }),
    rounds: new UpstreamRounds({ ttlMs: 600_000, maxRounds: 10 }),
    maxInputRounds: 10,
    pageSize,
    log,
    diagnostics,
    passThrough: new TaskPassThrough(group.upstreams, undefined),
    notifications,
  });
  await router.start();
  await catalogs.start();
  await d.start();
  const r = router;
  parts = {
    dispatcher: d,
    group,
    bus,
    catalogs,
    events,
    close: async () => {
      catalogs.close();
      await d.close();
      await r.close();
      await group.close();
      await bus.close();
      events.stop();
    },
  };
  return parts;
}

let nextId = 1;
const request = (method: string, params?: Record<string, unknown>, id: number | string = nextId++) => ({
  jsonrpc: '2.0' as const,
  id,
  method,
  ...(params ? { params } : {}),
});
const call = (name: string, args: Record<string, unknown> = {}, id?: number | string) =>
  request('tools/call', { name, arguments: args }, id);
const code = (name: ErrorName) => errorObject(name).code;
const errorOf = (r: JsonRpcResponse) => ('error' in r ? r.error : undefined);
const resultOf = (r: JsonRpcResponse) => ('result' in r ? (r.result as Record<string, any>) : undefined);
const text = (r: JsonRpcResponse) => resultOf(r)?.content?.[0]?.text as string | undefined;

afterEach(async () => {
  await parts?.close();
  parts = undefined;
});

afterAll(() => held.remove());

describe('Dispatcher', () => {
  it('lists the catalog a page at a time, the cursor leading to the next page', async () => {
    const { dispatcher: d, catalogs } = await dispatcher(2);
    const ctx = sessionContext('pages');
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await d.handleRequest(ctx, request('tools/list', cursor === undefined ? {} : { cursor }));
      const page = resultOf(r)!;
      expect(page.tools.length).toBeLessThanOrEqual(2);
      names.push(...page.tools.map((t: { name: string }) => t.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(names).toEqual(catalogs.catalog.list('tools').map((t) => t.name));
    expect(pages).toBe(Math.ceil(names.length / 2));
    expect(errorOf(await d.handleRequest(ctx, request('tools/list', { cursor: 'not-a-cursor' })))?.code).toBe(
      code('INVALID_PARAMS'),
    );
  });

  it('sends a call to its upstream under the upstream’s own name and publishes how it went', async () => {
    const { dispatcher: d, events } = await dispatcher();
    const r = await d.handleRequest(sessionContext('calls'), call('echo__echo', { text: 'hello' }));
    expect(text(r)).toBe('hello');
    expect(events.of('upstream:call-start')).toEqual([
      expect.objectContaining({ upstream: 'echo', method: 'tools/call' }),
    ]);
    expect(events.of('upstream:call-end')).toEqual([
      expect.objectContaining({ upstream: 'echo', tool: 'echo__echo', errorType: '' }),
    ]);
    expect(events.of('request:end')).toEqual([
      expect.objectContaining({
        method: 'tools/call',
        tool: 'echo__echo',
        errorType: '',
        scope: 'calls',
        stateless: false,
      }),
    ]);
  });

  it('answers what it cannot route with the table’s errors, and publishes them', async () => {
    const { dispatcher: d, events } = await dispatcher();
    const ctx = sessionContext('errors');
    const unknown = await d.handleRequest(ctx, call('nope'));
    expect(errorOf(unknown)).toMatchObject({ code: code('INVALID_PARAMS'), message: 'Unknown tool: nope' });
    expect(errorOf(await d.handleRequest(ctx, request('resources/read', { uri: 'nowhere://x' })))).toMatchObject({
      code: code('RESOURCE_NOT_FOUND'),
      data: { uri: 'nowhere://x' },
    });
    expect(errorOf(await d.handleRequest(ctx, request('initialize', {})))?.code).toBe(code('INVALID_REQUEST'));
    expect(errorOf(await d.handleRequest(ctx, request('no/such/method')))?.code).toBe(code('METHOD_NOT_FOUND'));
    // server/discover is the stateless revision's, not a session's.
    expect(errorOf(await d.handleRequest(ctx, request('server/discover')))?.code).toBe(code('METHOD_NOT_FOUND'));
    expect(resultOf(await d.handleRequest(ctx, request('ping')))).toEqual({});
    expect(events.of('request:end')[0]).toMatchObject({
      tool: '',
      errorType: 'INVALID_PARAMS',
      errorCode: String(code('INVALID_PARAMS')),
    });
    // None of these reached an upstream.
    expect(events.of('upstream:call-start')).toEqual([]);
  });

  it('reads a resource from the upstream that lists it', async () => {
    const { dispatcher: d } = await dispatcher();
    const r = await d.handleRequest(sessionContext('read'), request('resources/read', { uri: 'echo://readme' }));
    expect(resultOf(r)).toMatchObject({ contents: [{ uri: 'echo://readme', text: 'echo server readme' }] });
  });

  it('refuses a request id already in flight in the scope; the same id in another scope goes through', async () => {
    const { dispatcher: d } = await dispatcher();
    const first = d.handleRequest(sessionContext('ids-a'), call('h__hold', { key: 'ids-1' }, 7));
    await until('the first call is in flight', () => d.inFlight === 1);
    const again = await d.handleRequest(sessionContext('ids-a'), call('h__hold', { key: 'ids-2' }, 7));
    expect(errorOf(again)).toMatchObject({ code: code('INVALID_REQUEST'), message: 'Request id 7 is already in use' });
    const elsewhere = d.handleRequest(sessionContext('ids-b'), call('h__hold', { key: 'ids-3' }, 7));
    await until('the other scope’s call is in flight', () => d.inFlight === 2);
    held.release('ids-1');
    held.release('ids-3');
    expect([text(await first), text(await elsewhere)]).toEqual(['released ids-1', 'released ids-3']);
    expect(d.inFlight).toBe(0);
  });

  it('notifications/cancelled ends the call it names, with the client’s reason', async () => {
    const { dispatcher: d } = await dispatcher();
    const ctx = sessionContext('cancel');
    const pending = d.handleRequest(ctx, call('h__hold', { key: 'never' }, 'c1'));
    await until('the call is in flight', () => d.inFlight === 1);
    d.handleNotification(ctx, {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'c1', reason: 'changed my mind' },
    });
    expect(errorOf(await pending)).toMatchObject({
      code: code('REQUEST_CANCELLED'),
      message: 'Request cancelled: changed my mind',
    });
    expect(d.inFlight).toBe(0);
  });

  it('a cancel for a call not held here goes to the bus; one from the bus ends a call held here', async () => {
    const { dispatcher: d, bus } = await dispatcher();
    const published: unknown[] = [];
    await bus.subscribe(CANCEL_CHANNEL, (m) => published.push(decodeRemoteCancel(m)));
    d.handleNotification(sessionContext('remote'), {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 99 },
    });
    await until('the cancel was published', () => published.length === 1);
    expect(published).toEqual([{ scope: 'remote', requestId: 99 }]);
    const pending = d.handleRequest(sessionContext('remote'), call('h__hold', { key: 'never' }, 5));
    await until('the call is in flight', () => d.inFlight === 1);
    publishRemoteCancel(bus, { scope: 'remote', requestId: 5, message: 'Request cancelled: elsewhere' });
    expect(errorOf(await pending)).toMatchObject({
      code: code('REQUEST_CANCELLED'),
      message: 'Request cancelled: elsewhere',
    });
  });

  it('releaseScope ends that scope’s calls only', async () => {
    const { dispatcher: d } = await dispatcher();
    const gone = d.handleRequest(sessionContext('ending'), call('h__hold', { key: 'never' }));
    const stays = d.handleRequest(sessionContext('staying'), call('h__hold', { key: 'stays' }));
    await until('both calls are in flight', () => d.inFlight === 2);
    d.releaseScope('ending');
    expect(errorOf(await gone)).toMatchObject({ code: code('REQUEST_CANCELLED'), message: 'Session ended' });
    expect(d.inFlight).toBe(1);
    held.release('stays');
    expect(text(await stays)).toBe('released stays');
  });

  it("a per-session upstream's calls run on the session's own worker, and each session lists its own tools", async () => {
    const { dispatcher: d, group } = await dispatcher();
    const sampler: RequestContext = sessionContext('sampler', { clientCapabilities: { sampling: {} } });
    const plain = sessionContext('plain');
    const listed = async (ctx: RequestContext) =>
      resultOf(await d.handleRequest(ctx, request('tools/list')))!.tools.map((t: { name: string }) => t.name);
    expect(await listed(sampler)).toContain('caps__needs_sampling');
    expect(await listed(plain)).not.toContain('caps__needs_sampling');
    expect(text(await d.handleRequest(sampler, call('caps__needs_sampling')))).toBe('needs_sampling ran');
    expect(errorOf(await d.handleRequest(plain, call('caps__needs_sampling')))).toMatchObject({
      code: code('INVALID_PARAMS'),
    });
    const workers = group.upstreams.get('caps')!.workers;
    expect(workers.workerOf('sampler')).toBeDefined();
    expect(workers.workerOf('plain')).not.toBe(workers.workerOf('sampler'));
  });

  it('answers a stateless request in its revision’s shape, and server/discover there', async () => {
    const { dispatcher: d } = await dispatcher();
    const ctx: RequestContext = {
      protocolVersion: '2026-07-28',
      stateless: true,
      clientCapabilities: {},
      clientInfo: { name: 't', version: '1' },
      scope: 'req-1',
      sink: recordingSink(),
      sessionSink: undefined,
    };
    expect(resultOf(await d.handleRequest(ctx, call('echo__echo', { text: 'modern' })))).toMatchObject({
      resultType: 'complete',
      content: [{ text: 'modern' }],
    });
    expect(resultOf(await d.handleRequest({ ...ctx, scope: 'req-2' }, request('server/discover')))).toMatchObject({
      supportedVersions: expect.arrayContaining(['2026-07-28']),
    });
  });

  it('close() ends the calls still in flight with SHUTTING_DOWN', async () => {
    const p = await dispatcher();
    const pending = p.dispatcher.handleRequest(sessionContext('closing'), call('h__hold', { key: 'never' }));
    await until('the call is in flight', () => p.dispatcher.inFlight === 1);
    await p.dispatcher.close();
    expect(errorOf(await pending)?.code).toBe(code('SHUTTING_DOWN'));
  });
});
