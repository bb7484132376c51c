/**
 * SessionCatalogs as a module: a 2025 session's catalog when some upstream gives it a worker of
 * its own. Real upstreams from a config (the UpstreamGroup builds them: child processes), the real
 * CatalogManager beside it; the calls on a session's worker go straight to that upstream's
 * workers (the seam the module takes), counted. A session's own lists (initialized with its
 * capabilities), kept and forgotten, one build at a time, calls that need no worker, a worker
 * that cannot start, and a shared catalog replaced under a kept one.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/contracts/request-context.js';
import { CatalogManager } from '../../src/gateway/catalog-manager.js';
import type { Catalog } from '../../src/gateway/catalog.js';
import { SessionCatalogs, targetOf } from '../../src/gateway/session-catalogs.js';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import type { UpstreamGroup } from '../../src/upstream/group.js';
import { capabilityToolsUpstream } from '../support/capability-tools.js';
import { ECHO_SERVER, stdioUpstream } from '../support/gateway.js';
import { GATEWAY_IDENTITY, configWith, quietLog, sessionContext, upstreamGroup } from '../support/in-process.js';
import { listedServer } from '../support/listed-server.js';

const log = quietLog();
let group: UpstreamGroup | undefined;
let manager: CatalogManager | undefined;
const dead = listedServer(['never_listed_by_a_session'], { exitUnless: 'mcp-gateway' });

interface Setup {
  group: UpstreamGroup;
  manager: CatalogManager;
  catalogs: SessionCatalogs;
  /** Each call made on a session's own worker: `scope upstream method`. */
  calls: string[];
}

async function setUp(upstreams: Array<Record<string, unknown>>): Promise<Setup> {
  group = upstreamGroup(configWith(upstreams).upstreams);
  manager = new CatalogManager({ upstreams: group.upstreams, probeIdentity: GATEWAY_IDENTITY, log });
  await manager.start();
  const g = group;
  const calls: string[] = [];
  const catalogs = new SessionCatalogs({
    upstreams: g.upstreams,
    catalogs: manager,
    log,
    call: (ctx, upstream, method, params) => {
      calls.push(`${ctx.scope} ${upstream} ${method}`);
      const identity = () => ({
        clientInfo: ctx.clientInfo!,
        capabilities: { ...ctx.clientCapabilities },
        protocolVersion: ctx.protocolVersion,
      });
      return g.upstreams.get(upstream)!.workers.call(method, params, undefined, ctx.scope, identity).promise;
    },
    hasWorker: async (scope, upstream) => g.upstreams.get(upstream)!.workers.workerOf(scope) !== undefined,
  });
  return { group: g, manager, catalogs, calls };
}

const SAMPLING = { sampling: {} };
const toolNames = (catalog: Catalog) => catalog.list('tools').map((t) => t.name);
const call = (name: string) => ({
  jsonrpc: '2.0' as const,
  id: 1,
  method: 'tools/call',
  params: { name, arguments: {} },
});
const workerOf = (s: Setup, upstream: string, scope: string) =>
  s.group.upstreams.get(upstream)!.workers.workerOf(scope);

afterEach(async () => {
  manager?.close();
  await group?.close();
});

afterAll(() => dead.remove());

describe('SessionCatalogs', () => {
  it('without per-session upstreams every session reads the shared catalog, at once', async () => {
    const s = await setUp([stdioUpstream('echo', ECHO_SERVER)]);
    const catalog = s.catalogs.catalogFor(sessionContext('s1'));
    expect(catalog).toBe(s.manager.catalog);
    expect(s.calls).toEqual([]);
  });

  it("a session's catalog has its own worker's lists, initialized with its capabilities", async () => {
    const s = await setUp([stdioUpstream('echo', ECHO_SERVER), capabilityToolsUpstream('caps')]);
    expect(toolNames(s.manager.catalog)).toEqual(['caps__always', 'echo__echo', 'echo__add', 'echo__whoami']);
    const sampler = await s.catalogs.catalogFor(sessionContext('sampler', { clientCapabilities: SAMPLING }));
    const plain = await s.catalogs.catalogFor(sessionContext('plain'));
    expect(toolNames(sampler)).toEqual([
      'caps__always',
      'caps__needs_sampling',
      'echo__echo',
      'echo__add',
      'echo__whoami',
    ]);
    expect(toolNames(plain)).toEqual(toolNames(s.manager.catalog));
    // Only the per-session upstream was asked, on each session's own worker.
    expect(s.calls).toEqual(['sampler caps tools/list', 'plain caps tools/list']);
    expect(workerOf(s, 'caps', 'sampler')).toBeDefined();
    expect(workerOf(s, 'caps', 'plain')).not.toBe(workerOf(s, 'caps', 'sampler'));
  });

  it('keeps a session’s catalog until it is forgotten, and builds it once for requests that come together', async () => {
    const s = await setUp([capabilityToolsUpstream('caps')]);
    const ctx = sessionContext('kept', { clientCapabilities: SAMPLING });
    const [one, two] = await Promise.all([s.catalogs.catalogFor(ctx), s.catalogs.catalogFor(ctx)]);
    expect(one).toBe(two);
    expect(s.calls).toHaveLength(1);
    expect(await s.catalogs.catalogFor(ctx)).toBe(one);
    expect(s.catalogs.kept()).toEqual([one]);
    expect(s.calls).toHaveLength(1);
    s.catalogs.forget('kept');
    expect(s.catalogs.kept()).toEqual([]);
    const again = await s.catalogs.catalogFor(ctx);
    expect(again).not.toBe(one);
    expect(toolNames(again)).toEqual(toolNames(one));
    expect(s.calls).toHaveLength(2);
  });

  it('a kept catalog is built again once the shared catalog it was built over is replaced', async () => {
    const s = await setUp([stdioUpstream('echo', ECHO_SERVER), capabilityToolsUpstream('caps')]);
    const ctx = sessionContext('stale');
    const first = await s.catalogs.catalogFor(ctx);
    await s.manager.refreshNow('echo');
    const second = await s.catalogs.catalogFor(ctx);
    expect(second).not.toBe(first);
    expect(s.calls).toHaveLength(2);
  });

  it("a call naming a shared upstream's entry, or none the shared catalog has, starts no worker", async () => {
    const s = await setUp([stdioUpstream('echo', ECHO_SERVER), capabilityToolsUpstream('caps')]);
    const ctx = sessionContext('caller', { clientCapabilities: SAMPLING });
    expect(s.catalogs.catalogFor(ctx, targetOf(call('echo__echo'), undefined))).toBe(s.manager.catalog);
    // Not in the shared catalog, and no worker of its own yet: nothing could list it.
    expect(await s.catalogs.catalogFor(ctx, targetOf(call('caps__needs_sampling'), undefined))).toBe(s.manager.catalog);
    expect(s.calls).toEqual([]);
    expect(workerOf(s, 'caps', 'caller')).toBeUndefined();
    // Once it has one, that worker's lists answer the same call.
    await s.catalogs.catalogFor(ctx);
    s.catalogs.forget('caller');
    const own = await s.catalogs.catalogFor(ctx, targetOf(call('caps__needs_sampling'), undefined));
    expect(own.tool('caps__needs_sampling')).toMatchObject({ upstream: 'caps', original: 'needs_sampling' });
  });

  it('a worker that cannot start: the shared lists stand in, its failure is kept with that catalog, which is not kept', async () => {
    const s = await setUp([stdioUpstream('echo', ECHO_SERVER), dead.upstream('dead', { mode: 'per-session' })]);
    expect(toolNames(s.manager.catalog)).toContain('dead__never_listed_by_a_session');
    const ctx: RequestContext = sessionContext('doomed');
    const catalog = await s.catalogs.catalogFor(ctx);
    expect(toolNames(catalog)).toEqual(toolNames(s.manager.catalog));
    expect(s.catalogs.failure(catalog, 'dead')).toBeInstanceOf(GatewayError);
    expect(s.catalogs.failure(catalog, 'echo')).toBeUndefined();
    expect(s.catalogs.failure(s.manager.catalog, 'dead')).toBeUndefined();
    expect(s.catalogs.kept()).toEqual([]);
    await s.catalogs.catalogFor(ctx);
    expect(s.calls).toEqual(['doomed dead tools/list', 'doomed dead tools/list']);
  });
});
