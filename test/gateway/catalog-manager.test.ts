/**
 * CatalogManager as a module, over upstreams the UpstreamGroup builds from a config (real stdio
 * child processes): the example echo server, and servers whose tool lists the test changes while
 * they run (listed-server). Start-up (prefixes, tool filters, an upstream down at start joining
 * once it is up, a collision), catalog versions, refreshes and what they announce, spaced
 * refreshes taken together, availability, and a reload's staged catalog.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CatalogCollisionError } from '../../src/gateway/catalog.js';
import { CatalogManager } from '../../src/gateway/catalog-manager.js';
import type { UpstreamGroup } from '../../src/upstream/group.js';
import { ECHO_SERVER, stdioUpstream } from '../support/gateway.js';
import { GATEWAY_IDENTITY, configWith, quietLog, upstreamGroup } from '../support/in-process.js';
import { listedServer, type ListedServer } from '../support/listed-server.js';
import { until } from '../support/wait.js';

const log = quietLog();
const dir = mkdtempSync(join(tmpdir(), 'catalog-manager-'));
const servers: ListedServer[] = [];
const groups: UpstreamGroup[] = [];
const managers: CatalogManager[] = [];

function listed(tools: readonly string[], options: Parameters<typeof listedServer>[1] = {}): ListedServer {
  const s = listedServer(tools, options);
  servers.push(s);
  return s;
}

/** A manager over `upstreams` (config entries) and the announcements it makes. */
function manage(upstreams: Array<Record<string, unknown>>): {
  group: UpstreamGroup;
  manager: CatalogManager;
  heard: string[];
} {
  const group = upstreamGroup(configWith(upstreams).upstreams);
  const manager = new CatalogManager({ upstreams: group.upstreams, probeIdentity: GATEWAY_IDENTITY, log });
  const heard: string[] = [];
  manager.onListChanged((m) => heard.push(m));
  groups.push(group);
  managers.push(manager);
  return { group, manager, heard };
}

const toolNames = (manager: CatalogManager) => manager.catalog.list('tools').map((t) => t.name);
const TOOLS_CHANGED = 'notifications/tools/list_changed';

afterEach(async () => {
  for (const m of managers.splice(0)) m.close();
  await Promise.all(groups.splice(0).map((g) => g.close()));
});

afterAll(() => {
  for (const s of servers) s.remove();
  rmSync(dir, { recursive: true, force: true });
});

describe('CatalogManager', () => {
  it('starts every upstream and lists each under its prefix, its tool filter applied', async () => {
    const one = listed(['alpha', 'beta', 'secret']);
    const { manager } = manage([
      stdioUpstream('echo', ECHO_SERVER),
      one.upstream('one', { prefix: 'o', tools: { deny: ['secret'] } }),
    ]);
    await manager.start();
    expect(manager.complete).toBe(true);
    expect(toolNames(manager)).toEqual(['echo__echo', 'echo__add', 'echo__whoami', 'o__alpha', 'o__beta']);
    expect(manager.catalog.tool('o__beta')).toMatchObject({ upstream: 'one', original: 'beta' });
    expect(manager.catalog.tool('o__secret')).toBeUndefined();
    expect(manager.catalog.list('prompts').map((p) => p.name)).toEqual(['echo__greeting']);
    expect(manager.catalog.resource('echo://readme')).toMatchObject({ upstream: 'echo' });
    // The probe is the gateway's: its lists are what a client without a worker of its own sees.
    expect(one.initializedBy()).toEqual(['mcp-gateway']);
  });

  it('fails start-up on a name two upstreams both expose, naming both', async () => {
    const { manager } = manage([
      listed(['same']).upstream('first', { prefix: '' }),
      listed(['other', 'same']).upstream('second', { prefix: '' }),
    ]);
    const failure = await manager.start().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CatalogCollisionError);
    expect(String(failure)).toMatch(/"same".*"first".*"second"/);
  });

  it('leaves out an upstream that is down at start-up, and lists it once it comes up', async () => {
    const flag = join(dir, 'late-up');
    const late = listed(['late_tool'], { requires: flag });
    const { manager, heard } = manage([stdioUpstream('echo', ECHO_SERVER), late.upstream('late')]);
    await manager.start();
    expect(manager.complete).toBe(false);
    expect(manager.listed('late')).toBe(false);
    expect(toolNames(manager)).not.toContain('late__late_tool');
    writeFileSync(flag, '');
    await until('the late upstream is listed', () => manager.listed('late'), 20_000);
    expect(toolNames(manager)).toContain('late__late_tool');
    expect(manager.complete).toBe(true);
    expect(heard).toContain(TOOLS_CHANGED);
  });

  it('a refresh swaps in a new catalog version and announces it; the old version stays as it was', async () => {
    const s = listed(['first']);
    const { manager, heard } = manage([s.upstream('u')]);
    await manager.start();
    const before = manager.catalog;
    s.setTools(['first', 'second']);
    await manager.refreshNow('u');
    expect(toolNames(manager)).toEqual(['u__first', 'u__second']);
    expect(before.list('tools').map((t) => t.name)).toEqual(['u__first']);
    expect(manager.catalog).not.toBe(before);
    expect(heard).toEqual([
      TOOLS_CHANGED,
      'notifications/prompts/list_changed',
      'notifications/resources/list_changed',
    ]);
  });

  it('a refresh that would collide leaves the catalog as it was', async () => {
    const a = listed(['a_tool']);
    const b = listed(['b_tool']);
    const { manager, heard } = manage([a.upstream('a', { prefix: '' }), b.upstream('b', { prefix: '' })]);
    await manager.start();
    const before = manager.catalog;
    b.setTools(['b_tool', 'a_tool']);
    await manager.refreshNow('b');
    expect(manager.catalog).toBe(before);
    expect(heard).toEqual([]);
  });

  it('spaced refreshes asked for together are one refresh that announces each method', async () => {
    const s = listed(['x']);
    const { manager, heard } = manage([s.upstream('sp')]);
    await manager.start();
    const listsBefore = s.lists();
    s.setTools(['x', 'y']);
    manager.refreshSpaced('sp', TOOLS_CHANGED);
    manager.refreshSpaced('sp', 'notifications/prompts/list_changed');
    manager.refreshSpaced('sp', TOOLS_CHANGED);
    await until('the spaced refresh announced', () => heard.length === 2);
    expect(heard.sort()).toEqual(['notifications/prompts/list_changed', TOOLS_CHANGED]);
    expect(s.lists()).toBe(listsBefore + 1);
    expect(toolNames(manager)).toEqual(['sp__x', 'sp__y']);
  });

  it('an upstream that goes down leaves the listing (its routes stay) and comes back with list_changed', async () => {
    const { manager, heard } = manage([stdioUpstream('echo', ECHO_SERVER), listed(['kept']).upstream('k')]);
    await manager.start();
    manager.setAvailable('echo', false);
    expect(toolNames(manager)).toEqual(['k__kept']);
    expect(manager.catalog.list('prompts')).toEqual([]);
    expect(manager.catalog.tool('echo__echo')).toMatchObject({ upstream: 'echo' });
    expect(heard).toEqual([
      TOOLS_CHANGED,
      'notifications/prompts/list_changed',
      'notifications/resources/list_changed',
    ]);
    manager.setAvailable('echo', false);
    expect(heard).toHaveLength(3);
    manager.setAvailable('echo', true);
    expect(toolNames(manager)).toContain('echo__echo');
    expect(heard.slice(3, 6)).toEqual([
      TOOLS_CHANGED,
      'notifications/prompts/list_changed',
      'notifications/resources/list_changed',
    ]);
  });

  it('stages a reload: checked and built beside the running catalog, in place only on apply()', async () => {
    const stays = listed(['stays']);
    const goes = listed(['goes']);
    const { group, manager, heard } = manage([stays.upstream('stays'), goes.upstream('goes')]);
    await manager.start();
    const added = manage([listed(['new_tool']).upstream('added')]).group.upstreams.get('added')!;
    const staged = await manager.stage(new Map([['added', added]]), ['goes']);
    expect(staged.methods).toEqual([TOOLS_CHANGED]);
    // Ordered by upstream name, as every catalog is.
    expect(staged.catalog.list('tools').map((t) => t.name)).toEqual(['added__new_tool', 'stays__stays']);
    expect(toolNames(manager)).toEqual(['goes__goes', 'stays__stays']);
    expect(heard).toEqual([]);
    // The caller puts the staged entries in the upstream map, then applies.
    group.upstreams.delete('goes');
    group.upstreams.set('added', added);
    staged.apply();
    expect(toolNames(manager)).toEqual(['added__new_tool', 'stays__stays']);
    expect(manager.listed('goes')).toBe(false);
    expect(heard).toEqual([TOOLS_CHANGED]);
  });

  it('a staged catalog that collides throws, and nothing changes', async () => {
    const { manager } = manage([listed(['taken']).upstream('first', { prefix: '' })]);
    await manager.start();
    const before = manager.catalog;
    const clash = manage([listed(['taken']).upstream('clash', { prefix: '' })]).group.upstreams.get('clash')!;
    await expect(manager.stage(new Map([['clash', clash]]), [])).rejects.toBeInstanceOf(CatalogCollisionError);
    expect(manager.catalog).toBe(before);
  });
});
