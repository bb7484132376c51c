/**
 * The decision cache (policy/decision-cache.ts, through PolicySet): a set with it decides exactly
 * as the same file without it (a seeded property over random principals, resources, contexts and
 * arguments, on three files that read different parts of a request), a rule on the hour or the
 * arguments still tells requests apart, a set reading the epoch keeps nothing, a reload starts
 * with nothing kept, and the cache stays bounded however many principals ask.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DecisionCache, MAX_KEY_CHARS } from '../../src/policy/decision-cache.js';
import { LivePolicy } from '../../src/policy/live-policy.js';
import { readsOf } from '../../src/policy/policy-reads.js';
import { PolicySet, type PolicyRequest } from '../../src/policy/policy-set.js';
import { ROOT } from '../support/gateway.js';
import {
  anonymous,
  call,
  client,
  decided,
  NIGHT,
  OFFICE,
  random,
  tool,
  type Principal,
  type Resource,
} from '../support/policy-requests.js';

const dir = mkdtempSync(join(tmpdir(), 'mcpgw-policy-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One file compiled twice: with the decision cache (the default) and without it. */
function pair(text: string, cacheEntries?: number) {
  return {
    cached: PolicySet.compile(text, 'test.cedar', cacheEntries === undefined ? {} : { cacheEntries }),
    plain: PolicySet.compile(text, 'test.cedar', { cacheEntries: 0 }),
  };
}

// Reads what the example and the bench file do not: the principal's address and name, claims and
// arguments by computed keys (every tag then counts), the era, method and transport, prompts,
// resources and endpoints.
const WIDE = `
@id("by-address")
permit (principal is Gw::Client, action == Gw::Action::"callTool", resource)
when { principal.address == "10.0.0.1" && resource.server == "main" };
@id("anonymous-loopback")
permit (principal is Gw::Anonymous, action, resource)
when { principal.address like "127.*" && context.transport == "streamable-http" };
@id("own-upstream")
permit (principal is Gw::Client, action, resource is Gw::Tool) when { resource.upstream == principal.name };
@id("claim-by-upstream")
permit (principal is Gw::Client, action == Gw::Action::"callTool", resource)
when { principal.hasTag(resource.upstream) && principal.getTag(resource.upstream) == "yes" };
@id("argument-named-like-tool")
forbid (principal, action == Gw::Action::"callTool", resource) when { context.arguments.hasTag(resource.original) };
@id("stateless-prompts")
forbid (principal, action, resource) when { context.era == "2026-07-28" && context.method == "prompts/get" };
@id("sunday-writes")
forbid (principal, action == Gw::Action::"callTool", resource) when { context.weekday == 0 && !resource.readOnlyHint };
@id("p-prompts")
permit (principal, action == Gw::Action::"getPrompt", resource) when { resource.name like "p*" };
@id("files")
permit (principal, action == Gw::Action::"readResource", resource) when { resource.uri like "file:///*" };
@id("lists-and-tasks")
permit (principal, action in [Gw::Action::"list", Gw::Action::"task"], resource);
`;

const LONG = 'x'.repeat(MAX_KEY_CHARS + 100);
// Strings a client can send that Cedar's JSON parser refuses as they are (a lone surrogate), and long ones.
const ODD = ['\ud800', 'a\udc00b', LONG, `${LONG}y`];

function requests(seed: number, count: number): PolicyRequest[] {
  const next = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const some = (entries: Record<string, readonly string[]>): Record<string, string> =>
    Object.fromEntries(
      Object.entries(entries)
        .filter(() => next() < 0.4)
        .map(([k, values]) => [k, pick(values)]),
    );
  const principal = (): Principal => {
    const address = pick(['127.0.0.1', '10.0.0.1', '::1', ...ODD]);
    if (next() < 0.2) return { ...anonymous, address };
    const claims = some({ role: ['contractor', 'employee'], ops: ['yes', 'no'], docs: ['yes'], big: ODD });
    const id = pick(['ci', 'alice', 'ops', 'docs', ...ODD]);
    return client(
      id,
      ['contractor', 'staff', 's3', 's7'].filter(() => next() < 0.3),
      claims,
      address,
    );
  };
  const resource = (): [PolicyRequest['action'], Resource, string] => {
    const kind = next();
    if (kind < 0.6)
      return [
        'callTool',
        tool(pick(['ops__deploy_app', 'ops__read_logs', 't3__echo', 't7__x', 'docs__search']), next() < 0.5),
        'tools/call',
      ];
    if (kind < 0.7) {
      const name = pick(['plan', 'review', 'q']);
      return [
        'getPrompt',
        { type: 'Prompt', id: name, attrs: { name, upstream: 'docs', server: 'main' } },
        'prompts/get',
      ];
    }
    if (kind < 0.8) {
      const uri = pick(['file:///a', 'https://b', 'file:///\ud800']);
      return [
        'readResource',
        { type: 'Resource', id: uri, attrs: { uri, upstream: 'docs', server: 'main' } },
        'resources/read',
      ];
    }
    const endpoint: Resource = { type: 'Endpoint', id: 'main', attrs: { server: 'main' } };
    return next() < 0.5 ? ['list', endpoint, 'tools/list'] : ['task', endpoint, 'tasks/get'];
  };
  return Array.from({ length: count }, () => {
    const [action, target, method] = resource();
    return {
      principal: principal(),
      action,
      resource: target,
      context: {
        method,
        era: pick(['2025', '2026-07-28']),
        transport: pick(['streamable-http', 'connection']),
        // Few hours and days, so requests repeat and the cache answers some.
        hour: pick([8, 10, 17, 22]),
        weekday: pick([0, 2, 6]),
        epoch: 1_700_000_000 + Math.floor(next() * 100_000),
      },
      arguments:
        action === 'callTool' ? some({ env: ['staging', 'production', ...ODD], deploy_app: ['1'], other: ['x'] }) : {},
    };
  });
}

describe('decisions with the cache equal decisions without it (seeded property)', () => {
  const files = {
    example: readFileSync(resolve(ROOT, 'examples/policy/example.cedar'), 'utf8'),
    'bench-20': readFileSync(resolve(ROOT, 'examples/policy/bench-20.cedar'), 'utf8'),
    wide: WIDE,
  };
  for (const [name, text] of Object.entries(files))
    it(`${name}: every call's decision and every list's answer`, () => {
      const { cached, plain } = pair(text);
      // Each request twice, the second time later (another epoch, which none of these reads) and in
      // the other order, so the cache answers at least the second of each.
      const first = requests(34, 500);
      const again = first.map((r) => ({ ...r, context: { ...r.context, epoch: r.context.epoch + 3600 } })).reverse();
      for (const [i, request] of [...first, ...again].entries()) {
        const why = `request ${i}: ${JSON.stringify(request).slice(0, 400)}`;
        expect(decided(cached.decide(request)), why).toEqual(decided(plain.decide(request)));
        const asList = { ...request, arguments: undefined };
        expect(cached.mayAllow(asList), why).toBe(plain.mayAllow(asList));
      }
      // The property said something about the cache: it answered every repeat, and kept each
      // decision a miss made.
      const { calls, lists } = cached.cacheStats;
      expect(calls!.hits).toBeGreaterThanOrEqual(500);
      expect(lists!.hits).toBeGreaterThanOrEqual(500);
      expect(calls!.entries).toBe(calls!.misses);
    });
});

const HOURS = `
permit (principal, action, resource);
@id("office-hours")
forbid (principal, action, resource) unless { context.weekday >= 1 && context.weekday <= 5 && context.hour >= 9 && context.hour < 17 };
`;

describe('what the key holds', () => {
  const alice = client('alice', ['staff']);
  const write = tool('ops__write_note', false);

  it('a rule on the hour and weekday decides each hour anew, the cache on', () => {
    const { cached } = pair(HOURS);
    for (let round = 0; round < 2; round++) {
      expect(cached.decide(call(alice, write, {}, OFFICE)).allowed).toBe(true);
      expect(cached.decide(call(alice, write, {}, NIGHT))).toEqual({ allowed: false, policies: ['office-hours'] });
      expect(cached.decide(call(alice, write, {}, { hour: 16, weekday: 2 })).allowed).toBe(true);
      expect(cached.decide(call(alice, write, {}, { hour: 17, weekday: 2 })).allowed).toBe(false);
      expect(cached.decide(call(alice, write, {}, { hour: 10, weekday: 0 })).allowed).toBe(false);
      expect(cached.mayAllow(call(alice, write, undefined, NIGHT))).toBe(false);
      expect(cached.mayAllow(call(alice, write, undefined, OFFICE))).toBe(true);
    }
    // The second round came from the cache, and the epoch (not read) made no new entry.
    expect(cached.cacheStats.calls).toEqual({ entries: 5, hits: 5, misses: 5 });
    expect(
      cached.decide({ ...call(alice, write, {}, OFFICE), context: { ...call(alice, write, {}).context, epoch: 1 } })
        .allowed,
    ).toBe(true);
    expect(cached.cacheStats.calls!.entries).toBe(5);
  });

  it('a set that reads the epoch keeps nothing, and decides each second anew', () => {
    const { cached } = pair('permit (principal, action, resource) when { context.epoch < 1700000000 };');
    expect(cached.cacheStats).toEqual({ calls: undefined, lists: undefined });
    const at = (epoch: number) => ({
      ...call(alice, write, {}),
      context: { ...call(alice, write, {}).context, epoch },
    });
    expect(cached.decide(at(1_699_999_999)).allowed).toBe(true);
    expect(cached.decide(at(1_700_000_000)).allowed).toBe(false);
  });

  it('the arguments a rule reads tell calls apart; those it does not read share an entry', () => {
    const { cached } = pair(readFileSync(resolve(ROOT, 'examples/policy/example.cedar'), 'utf8'));
    const ci = client('ci');
    const deploy = tool('ops__deploy_app', false);
    for (let round = 0; round < 2; round++) {
      expect(cached.decide(call(ci, deploy, { env: 'staging' })).allowed).toBe(true);
      expect(cached.decide(call(ci, deploy, { env: 'production' })).allowed).toBe(false);
      expect(cached.decide(call(ci, deploy, {})).allowed).toBe(false);
      expect(cached.decide(call(ci, deploy, { env: 'staging', note: `round ${round}` })).allowed).toBe(true);
    }
    expect(cached.cacheStats.calls).toEqual({ entries: 3, hits: 5, misses: 3 });
  });

  it('a lone surrogate in an argument is decided (Cedar refuses it as JSON), cached or not', () => {
    const { cached, plain } = pair(readFileSync(resolve(ROOT, 'examples/policy/example.cedar'), 'utf8'));
    const ci = client('ci', [], { team: '\udc00' });
    const deploy = tool('ops__deploy_app', false);
    const argSets: Array<Record<string, string>> = [
      { env: 'staging', note: '\ud800' },
      { env: 'staging\ud800' },
      { '\ud800': 'x', env: 'staging' },
    ];
    for (const args of argSets) {
      expect(decided(plain.decide(call(ci, deploy, args)))).toEqual(decided(cached.decide(call(ci, deploy, args))));
      expect(plain.decide(call(ci, deploy, args)).allowed).toBe(args.env === 'staging');
    }
  });

  it('a long claim or argument that is read makes a hashed key of bounded length, one per value', () => {
    const reads = readsOf([
      'permit (principal is Gw::Client, action, resource) when { principal.getTag("groups") like "*admin*" };',
    ]);
    const cache = DecisionCache.for(reads, 10)!;
    const key = (groups: string) => cache.key(call(client('u', [], { groups }), tool('a__b', true), {}), {});
    const huge = 'g,'.repeat(50_000);
    expect(key(`${huge}admin`).length).toBeLessThanOrEqual(MAX_KEY_CHARS);
    expect(key(`${huge}admin`)).not.toBe(key(`${huge}user`));
    expect(key('admin').length).toBeLessThanOrEqual(MAX_KEY_CHARS);
    // A claim no policy reads is not in the key at all.
    expect(cache.key(call(client('u', [], { groups: 'a', other: huge }), tool('a__b', true), {}), {})).toBe(key('a'));
  });
});

describe('a reload and many principals', () => {
  it('a reload compiles a new set, which keeps nothing of the old one', () => {
    const file = join(dir, 'reload.cedar');
    writeFileSync(file, '@id("all")\npermit (principal, action, resource);\n');
    const live = new LivePolicy({ authorization: { policyFile: file }, auth: { mode: 'none' } } as never);
    const request = call(client('alice'), tool('ops__write_note', false), {});
    expect(live.set!.decide(request)).toEqual({ allowed: true, policies: ['all'] });
    expect(live.set!.decide(request).allowed).toBe(true);
    expect(live.set!.cacheStats.calls).toMatchObject({ entries: 1, hits: 1 });
    writeFileSync(file, '@id("none")\nforbid (principal, action, resource);\n');
    live.read({ authorization: { policyFile: file }, auth: { mode: 'none' } } as never)();
    expect(live.set!.cacheStats.calls).toEqual({ entries: 0, hits: 0, misses: 0 });
    expect(live.set!.decide(request)).toEqual({ allowed: false, policies: ['none'] });
  });

  it('stays bounded under many distinct principals; what was used lately stays, what was not goes first', () => {
    const { cached } = pair(
      'permit (principal is Gw::Client, action, resource) when { principal.name like "u*" };',
      64,
    );
    const request = (i: number) => call(client(`u${i}`), tool('a__b', true), {});
    const stats = () => cached.cacheStats.calls!;
    for (let i = 0; i < 1000; i++) {
      expect(cached.decide(request(i)).allowed).toBe(true);
      expect(stats().entries).toBeLessThanOrEqual(64);
    }
    expect(stats()).toMatchObject({ hits: 0, misses: 1000 });
    // The last half of the capacity is kept whatever came before.
    for (let i = 968; i < 1000; i++) cached.decide(request(i));
    expect(stats()).toMatchObject({ hits: 32, misses: 1000 });
    // u0..u31 fill a generation; u0 is used again, u1..u31 are not; 31 more newcomers fill the next:
    // u0 stays, u1 is gone.
    const fresh = pair('permit (principal is Gw::Client, action, resource) when { principal.name like "u*" };', 64);
    for (let i = 0; i < 32; i++) fresh.cached.decide(request(i));
    fresh.cached.decide(request(0));
    for (let i = 32; i < 63; i++) fresh.cached.decide(request(i));
    expect(fresh.cached.cacheStats.calls).toMatchObject({ hits: 1, misses: 63 });
    fresh.cached.decide(request(0));
    expect(fresh.cached.cacheStats.calls).toMatchObject({ hits: 2, misses: 63 });
    fresh.cached.decide(request(1));
    expect(fresh.cached.cacheStats.calls).toMatchObject({ hits: 2, misses: 64 });
  });

  it('the default bound: a few thousand entries, whatever the number of principals', () => {
    const set = PolicySet.compile(
      'permit (principal is Gw::Client, action, resource) when { principal.name like "u*" };',
      'x',
    );
    for (let i = 0; i < 5000; i++) set.decide(call(client(`u${i}`, [], { big: LONG }), tool('a__b', true), {}));
    expect(set.cacheStats.calls!.entries).toBeGreaterThanOrEqual(2048);
    expect(set.cacheStats.calls!.entries).toBeLessThanOrEqual(4096);
  });
});
