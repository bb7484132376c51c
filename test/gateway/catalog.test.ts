/**
 * The catalog (namespacing, order, collisions, resource routing) and the gateway's own
 * pagination, as units; plus one integration test: a name collision between two real upstreams
 * fails start-up cleanly, naming both, and leaves no child process behind.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Catalog, CatalogCollisionError, type UpstreamLists } from '../../src/gateway/catalog.js';
import { paginate } from '../../src/gateway/pagination.js';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import { ECHO_SERVER, exampleConfig, isAlive, startGateway, stdioUpstream } from '../support/gateway.js';

function upstream(name: string, prefix: string, lists: UpstreamLists['lists']): UpstreamLists {
  return { name, prefix, lists };
}

const names = (entries: ReadonlyArray<Record<string, unknown>>) => entries.map((e) => e.name);

describe('Catalog namespacing', () => {
  it('exposes tools and prompts as <prefix>__<name> and routes them back to the original name', () => {
    const tool = {
      name: 'echo',
      description: 'Echoes',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    };
    const catalog = new Catalog([
      upstream('echo', 'e', {
        tools: [tool, { name: 'add' }],
        prompts: [{ name: 'greeting', arguments: [{ name: 'name' }] }],
      }),
    ]);
    expect(catalog.list('tools')).toEqual([{ ...tool, name: 'e__echo' }, { name: 'e__add' }]);
    expect(names(catalog.list('prompts'))).toEqual(['e__greeting']);
    expect(catalog.list('prompts')[0]).toEqual({ name: 'e__greeting', arguments: [{ name: 'name' }] });
    expect(catalog.tool('e__echo')).toEqual({ upstream: 'echo', original: 'echo' });
    expect(catalog.tool('e__add')).toEqual({ upstream: 'echo', original: 'add' });
    expect(catalog.prompt('e__greeting')).toEqual({ upstream: 'echo', original: 'greeting' });
    // The bare name and a wrong prefix are not routes.
    expect(catalog.tool('echo')).toBeUndefined();
    expect(catalog.tool('echo__echo')).toBeUndefined();
    expect(catalog.prompt('greeting')).toBeUndefined();
    // The upstream's own entry is not modified.
    expect(tool.name).toBe('echo');
  });

  it("exposes names unchanged with prefix ''", () => {
    const catalog = new Catalog([
      upstream('echo', '', { tools: [{ name: 'echo' }, { name: 'add' }], prompts: [{ name: 'greeting' }] }),
    ]);
    expect(names(catalog.list('tools'))).toEqual(['echo', 'add']);
    expect(names(catalog.list('prompts'))).toEqual(['greeting']);
    expect(catalog.tool('echo')).toEqual({ upstream: 'echo', original: 'echo' });
    expect(catalog.prompt('greeting')).toEqual({ upstream: 'echo', original: 'greeting' });
    expect(catalog.tool('__echo')).toBeUndefined();
  });

  it('skips entries without a usable name', () => {
    const catalog = new Catalog([
      upstream('u', 'u', { tools: [{ name: '' }, { description: 'no name' }, { name: 42 }, { name: 'ok' }] }),
    ]);
    expect(names(catalog.list('tools'))).toEqual(['u__ok']);
  });

  it('orders entries by upstream name, then by each upstream’s own order, whatever the input order', () => {
    const zeta = upstream('zeta', 'z', {
      tools: [{ name: 'b' }, { name: 'a' }],
      resources: [{ uri: 'z://2' }, { uri: 'z://1' }],
    });
    const alpha = upstream('alpha', 'a', { tools: [{ name: 'd' }, { name: 'c' }], resources: [{ uri: 'a://9' }] });
    const mid = upstream('mid', '', { tools: [{ name: 'y' }, { name: 'x' }] });
    const one = new Catalog([zeta, alpha, mid]);
    const two = new Catalog([mid, zeta, alpha]);
    const expected = ['a__d', 'a__c', 'y', 'x', 'z__b', 'z__a'];
    expect(names(one.list('tools'))).toEqual(expected);
    expect(names(two.list('tools'))).toEqual(expected);
    expect(one.list('resources').map((r) => r.uri)).toEqual(['a://9', 'z://2', 'z://1']);
    expect(two.list('resources')).toEqual(one.list('resources'));
  });

  it('throws CatalogCollisionError naming both upstreams when two expose the same tool name', () => {
    const build = () =>
      new Catalog([
        upstream('first-up', '', { tools: [{ name: 'echo' }] }),
        upstream('second-up', '', { tools: [{ name: 'other' }, { name: 'echo' }] }),
      ]);
    expect(build).toThrow(CatalogCollisionError);
    expect(build).toThrow(/"echo".*"first-up".*"second-up"/);
  });

  it('detects a collision between a prefixed name and an unprefixed one', () => {
    const build = () =>
      new Catalog([upstream('a', 'p', { tools: [{ name: 'x' }] }), upstream('b', '', { tools: [{ name: 'p__x' }] })]);
    let caught: unknown;
    try {
      build();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CatalogCollisionError);
    expect((caught as Error).message).toContain('"p__x"');
    expect((caught as Error).message).toContain('"a"');
    expect((caught as Error).message).toContain('"b"');
  });

  it('detects prompt and resource collisions, but not equal names of different kinds', () => {
    expect(
      () =>
        new Catalog([upstream('a', '', { prompts: [{ name: 'p' }] }), upstream('b', '', { prompts: [{ name: 'p' }] })]),
    ).toThrow(/prompts.*"a".*"b"/);
    expect(
      () =>
        new Catalog([
          upstream('a', 'a', { resources: [{ uri: 'mem://x' }] }),
          upstream('b', 'b', { resources: [{ uri: 'mem://x' }] }),
        ]),
    ).toThrow(CatalogCollisionError);
    const mixed = new Catalog([
      upstream('a', '', { tools: [{ name: 'same' }] }),
      upstream('b', '', { prompts: [{ name: 'same' }] }),
    ]);
    expect(mixed.tool('same')).toEqual({ upstream: 'a', original: 'same' });
    expect(mixed.prompt('same')).toEqual({ upstream: 'b', original: 'same' });
  });
});

describe('Catalog resource routing', () => {
  const catalog = new Catalog([
    upstream('echo', 'echo', {
      resources: [{ uri: 'echo://readme', name: 'readme' }],
      resourceTemplates: [{ uriTemplate: 'echo://items/{id}', name: 'item' }],
    }),
    upstream('files', 'files', {
      resources: [{ uri: 'file:///special/one' }],
      resourceTemplates: [
        { uriTemplate: 'file:///{path}', name: 'any file' },
        { uriTemplate: 'file:///projects/{name}/README', name: 'project readme' },
        { uriTemplate: '{anything}', name: 'no literal prefix' },
      ],
    }),
    upstream('projects', 'projects', { resourceTemplates: [{ uriTemplate: 'file:///projects/src/{file}' }] }),
    upstream('sources', 'sources', { resourceTemplates: [{ uriTemplate: 'file:///projects/{name}/src/{file}' }] }),
  ]);

  it('keeps URIs and templates unprefixed in the lists', () => {
    expect(catalog.list('resources').map((r) => r.uri)).toEqual(['echo://readme', 'file:///special/one']);
    expect(catalog.list('resourceTemplates').map((t) => t.uriTemplate)).toEqual([
      'echo://items/{id}',
      'file:///{path}',
      'file:///projects/{name}/README',
      '{anything}',
      'file:///projects/src/{file}',
      'file:///projects/{name}/src/{file}',
    ]);
  });

  it('routes a listed resource by its exact URI', () => {
    expect(catalog.resource('echo://readme')).toEqual({ upstream: 'echo', original: 'echo://readme' });
    expect(catalog.resource('file:///special/one')).toEqual({ upstream: 'files', original: 'file:///special/one' });
  });

  it('routes other URIs by the template they match whole, the most literal template winning', () => {
    expect(catalog.resource('echo://items/42')).toEqual({ upstream: 'echo', original: 'echo://items/42' });
    expect(catalog.resource('file:///etc/hosts')).toEqual({ upstream: 'files', original: 'file:///etc/hosts' });
    expect(catalog.resource('file:///projects/src/app.ts')).toEqual({
      upstream: 'projects',
      original: 'file:///projects/src/app.ts',
    });
    expect(catalog.resource('file:///projects/gw/README')).toEqual({
      upstream: 'files',
      original: 'file:///projects/gw/README',
    });
    // Same literal prefix as the README template, but only this one matches the whole URI.
    expect(catalog.resource('file:///projects/gw/src/main.ts')).toEqual({
      upstream: 'sources',
      original: 'file:///projects/gw/src/main.ts',
    });
  });

  it('does not route a URI nothing matches (a template without a literal prefix matches nothing)', () => {
    expect(catalog.resource('echo://other')).toBeUndefined();
    expect(catalog.resource('https://example.com/')).toBeUndefined();
    expect(catalog.resource('')).toBeUndefined();
  });
});

describe('pagination', () => {
  const items = Array.from({ length: 10 }, (_, i) => `item-${i}`);

  it('returns pages of pageSize and a nextCursor that continues where the page ended', () => {
    const first = paginate(items, undefined, 4);
    expect(first.page).toEqual(['item-0', 'item-1', 'item-2', 'item-3']);
    expect(typeof first.nextCursor).toBe('string');
    const second = paginate(items, first.nextCursor, 4);
    expect(second.page).toEqual(['item-4', 'item-5', 'item-6', 'item-7']);
    const third = paginate(items, second.nextCursor, 4);
    expect(third.page).toEqual(['item-8', 'item-9']);
    expect(third.nextCursor).toBeUndefined();
    expect('nextCursor' in third).toBe(false);
  });

  it('walks the whole list exactly once, and ends without a cursor on an exact multiple', () => {
    for (const pageSize of [1, 3, 5, 10, 11]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const { page, nextCursor } = paginate(items, cursor, pageSize);
        expect(page.length).toBeLessThanOrEqual(pageSize);
        seen.push(...page);
        cursor = nextCursor;
        pages++;
      } while (cursor !== undefined && pages < 100);
      expect(seen, `pageSize ${pageSize}`).toEqual(items);
      expect(pages).toBe(Math.max(1, Math.ceil(items.length / pageSize)));
    }
    expect(paginate([], undefined, 5)).toEqual({ page: [] });
  });

  it('rejects a garbage cursor with INVALID_PARAMS', () => {
    const garbage: unknown[] = [
      'not-a-cursor',
      '',
      42,
      null,
      {},
      'x'.repeat(100),
      Buffer.from('o:-3').toString('base64url'),
      Buffer.from('o:0').toString('base64url'),
      Buffer.from('o:1.5').toString('base64url'),
      Buffer.from('offset:4').toString('base64url'),
    ];
    for (const cursor of garbage) {
      let caught: unknown;
      try {
        paginate(items, cursor, 4);
      } catch (err) {
        caught = err;
      }
      expect(caught, `cursor ${JSON.stringify(cursor)}`).toBeInstanceOf(GatewayError);
      expect((caught as GatewayError).type).toBe('INVALID_PARAMS');
      expect((caught as GatewayError).toJsonRpc().code).toBe(-32602);
    }
  });
});

/** Pids of live processes whose environment carries `MCPGW_TEST_MARK=<mark>` (Linux /proc). */
function markedProcesses(mark: string): number[] {
  const needle = `MCPGW_TEST_MARK=${mark}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(needle)) pids.push(Number(entry));
    } catch {
      /* gone, or not ours */
    }
  }
  return pids;
}

async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

describe('a tool name collision between real upstreams', () => {
  it('fails start-up with an error naming both upstreams and leaves no child process behind', async () => {
    const mark = randomUUID();
    const env = { MCPGW_TEST_MARK: mark };
    const config = exampleConfig({
      upstreams: [
        stdioUpstream('echo-one', ECHO_SERVER, { prefix: '', env }),
        stdioUpstream('echo-two', ECHO_SERVER, { prefix: '', env }),
      ],
    });

    // Watch the children come and go while the gateway starts.
    const seen = new Set<number>();
    const watcher = setInterval(() => {
      for (const pid of markedProcesses(mark)) seen.add(pid);
    }, 10);
    let caught: unknown;
    try {
      const running = await startGateway(config);
      await running.stop();
    } catch (err) {
      caught = err;
    } finally {
      clearInterval(watcher);
    }

    expect(caught).toBeInstanceOf(CatalogCollisionError);
    const message = (caught as Error).message;
    expect(message).toContain('"echo-one"');
    expect(message).toContain('"echo-two"');
    expect(message).toContain('"echo"');

    // Both upstreams really ran (one worker each), so the check below has something to check.
    expect(seen.size).toBe(2);
    expect(await waitFor(() => markedProcesses(mark).length === 0, 5000)).toBe(true);
    for (const pid of seen) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });
});
