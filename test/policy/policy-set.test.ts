/**
 * The policy module in process (policy/policy-set.ts): the example policy of docs/policy.md
 * decides each of the issue's rule kinds, a file that does not parse or validate is refused with
 * its line and column, and a list's question (could any arguments be allowed?) agrees with the
 * calls' decisions over random principals, tools and arguments.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cedarSchema } from '../../src/policy/cedar-schema.js';
import { PolicyFileError, PolicySet, policyProblems, type PolicyRequest } from '../../src/policy/policy-set.js';
import { ROOT } from '../support/gateway.js';

const EXAMPLE = resolve(ROOT, 'examples/policy/example.cedar');
const dir = mkdtempSync(join(tmpdir(), 'mcpgw-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Principal = PolicyRequest['principal'];
const client = (id: string, scopes: string[] = [], claims: Record<string, string> = {}): Principal => ({
  kind: 'client',
  id,
  name: id,
  scopes,
  claims,
  address: '127.0.0.1',
});
const anonymous: Principal = { kind: 'anonymous', address: '127.0.0.1' };

// Tuesday 10:00 UTC, and Saturday 22:00 UTC.
const OFFICE = { hour: 10, weekday: 2 };
const NIGHT = { hour: 22, weekday: 6 };

function tool(name: string, readOnlyHint: boolean): PolicyRequest['resource'] {
  return {
    type: 'Tool',
    id: name,
    attrs: {
      name,
      upstream: name.split('__')[0]!,
      original: name.split('__')[1]!,
      server: 'main',
      readOnlyHint,
      destructiveHint: !readOnlyHint,
      idempotentHint: false,
      openWorldHint: true,
    },
  };
}

function call(
  principal: Principal,
  resource: PolicyRequest['resource'],
  args: Record<string, string> | undefined,
  time = OFFICE,
): PolicyRequest {
  return {
    principal,
    action: 'callTool',
    resource,
    context: { method: 'tools/call', era: '2025', transport: 'streamable-http', epoch: 1_700_000_000, ...time },
    arguments: args,
  };
}

describe('the example policy (docs/policy.md)', () => {
  const set = PolicySet.load(EXAMPLE);
  const deploy = tool('ops__deploy_app', false);
  const readLogs = tool('ops__read_logs', true);
  const write = tool('ops__write_note', false);

  it('knows its policies by their @id', () => {
    expect(set.ids).toEqual([
      'ci-deploys-staging',
      'contractors-read-only',
      'no-writes-after-hours',
      'staff',
      'lists-and-tasks',
    ]);
  });

  it('the ci key may call deploy tools only with env: staging', () => {
    const ci = client('ci');
    expect(set.decide(call(ci, deploy, { env: 'staging' }))).toEqual({
      allowed: true,
      policies: ['ci-deploys-staging'],
    });
    expect(set.decide(call(ci, deploy, { env: 'production' }))).toEqual({ allowed: false, policies: [] });
    expect(set.decide(call(ci, deploy, {})).allowed).toBe(false);
    expect(set.decide(call(ci, readLogs, { env: 'staging' })).allowed).toBe(false);
    // A list shows the deploy tool (some arguments are allowed), not the others.
    expect(set.mayAllow(call(ci, deploy, undefined))).toBe(true);
    expect(set.mayAllow(call(ci, readLogs, undefined))).toBe(false);
  });

  it('read-only tools (readOnlyHint) for contractors, by scope or by claim', () => {
    for (const contractor of [client('c1', ['contractor']), client('c2', [], { role: 'contractor' })]) {
      expect(set.decide(call(contractor, readLogs, {}))).toEqual({
        allowed: true,
        policies: ['contractors-read-only'],
      });
      expect(set.decide(call(contractor, write, {})).allowed).toBe(false);
      expect(set.decide(call(contractor, deploy, { env: 'staging' })).allowed).toBe(false);
    }
    expect(set.decide(call(client('c3', [], { role: 'employee' }), readLogs, {})).allowed).toBe(false);
    expect(set.decide(call(anonymous, readLogs, {})).allowed).toBe(false);
  });

  it('no writes outside office hours, whoever asks; reads go on', () => {
    const staff = client('alice', ['staff']);
    expect(set.decide(call(staff, write, {}, OFFICE))).toEqual({ allowed: true, policies: ['staff'] });
    expect(set.decide(call(staff, write, {}, NIGHT))).toEqual({ allowed: false, policies: ['no-writes-after-hours'] });
    expect(set.decide(call(staff, write, {}, { hour: 10, weekday: 0 })).allowed).toBe(false);
    expect(set.decide(call(staff, readLogs, {}, NIGHT)).allowed).toBe(true);
    expect(set.decide(call(client('ci'), deploy, { env: 'staging' }, NIGHT)).allowed).toBe(false);
  });

  it('lists and task operations for every client, anonymous ones too', () => {
    const endpoint = { type: 'Endpoint', id: 'main', attrs: { server: 'main' } } as const;
    for (const principal of [anonymous, client('x')])
      for (const action of ['list', 'task'] as const)
        expect(set.decide({ ...call(principal, endpoint, {}), action }).allowed).toBe(true);
  });
});

function policyFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('a file that does not parse or validate', () => {
  it('a syntax error names the file, line and column', () => {
    const file = policyFile(
      'syntax.cedar',
      'permit (principal, action, resource);\n\npermit (principal, action, resource)\n  when { context.hour > };\n',
    );
    expect(() => PolicySet.load(file)).toThrow(PolicyFileError);
    expect(() => PolicySet.load(file)).toThrow(`${file}:4:25: `);
  });

  it('an attribute the gateway does not set is refused by the schema, with line and column', () => {
    const file = policyFile(
      'unknown.cedar',
      '@id("typo")\npermit (principal is Gw::Client, action, resource)\n  when { principal.team == "ops" };\n',
    );
    expect(() => PolicySet.load(file)).toThrow(/unknown\.cedar:3:10: .*attribute `team` on entity type `Gw::Client`/);
    const tool = policyFile(
      'tool.cedar',
      'permit (principal, action, resource is Gw::Tool) when { resource.owner == 1 };',
    );
    expect(() => PolicySet.load(tool)).toThrow(/tool\.cedar:1:\d+: .*attribute `owner`/);
    // An entity type or action that does not exist either.
    const action = policyFile('action.cedar', 'permit (principal, action == Gw::Action::"deleteAll", resource);');
    expect(() => PolicySet.load(action)).toThrow(/action\.cedar:1:\d+: .*deleteAll/);
  });

  it('two policies with one @id, a file without a policy, and a missing file, are refused too', () => {
    const twice = policyFile(
      'twice.cedar',
      '@id("a")\npermit (principal, action, resource);\n@id("a")\nforbid (principal, action, resource);',
    );
    expect(() => PolicySet.load(twice)).toThrow('two policies have the @id "a"');
    // Empty, or comments only: what a reload reads between a writer's truncate and its write.
    for (const text of ['', '\n  \n', '// nothing yet\n'])
      expect(() => PolicySet.load(policyFile('empty.cedar', text))).toThrow(/empty\.cedar: holds no policy/);
    expect(policyProblems(join(dir, 'missing.cedar'))).toEqual([
      expect.stringMatching(/^authorization\.policyFile: .*missing\.cedar: ENOENT/),
    ]);
    expect(policyProblems(EXAMPLE)).toEqual([]);
  });

  it('the generated schema names every attribute docs/policy.md lists', () => {
    const docs = readFileSync(resolve(ROOT, 'docs/policy.md'), 'utf8');
    for (const m of cedarSchema().matchAll(/(\w+): (String|Bool|Long|Set<String>|Arguments)/g))
      expect(docs, m[1]).toContain(`\`${m[1]}\``);
    expect(docs).toContain(readFileSync(EXAMPLE, 'utf8').trim());
  });
});

/** A small deterministic generator (mulberry32): the property's cases repeat run to run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('lists agree with calls (property over random principals x tools)', () => {
  it('a tool is listed exactly when some call of it is allowed', () => {
    const set = PolicySet.load(EXAMPLE);
    const next = random(32);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const names = ['ops__deploy_app', 'ops__deploy_db', 'ops__read_logs', 'ops__write_note', 'docs__search'];
    const scopes = ['contractor', 'staff', 'other'];
    // Every argument value a rule could tell apart, so "some call allowed" is decided exhaustively.
    const argSets: Array<Record<string, string>> = [{}, { env: 'staging' }, { env: 'production' }, { other: 'x' }];
    for (let i = 0; i < 300; i++) {
      const principal =
        next() < 0.15
          ? anonymous
          : client(
              pick(['ci', 'bob', 'carol']),
              scopes.filter(() => next() < 0.3),
              next() < 0.3 ? { role: pick(['contractor', 'employee']) } : {},
            );
      const resource = tool(pick(names), next() < 0.5);
      const time = { hour: Math.floor(next() * 24), weekday: Math.floor(next() * 7) };
      const listed = set.mayAllow(call(principal, resource, undefined, time));
      const someCall = argSets.some((args) => set.decide(call(principal, resource, args, time)).allowed);
      expect(listed, JSON.stringify({ principal, resource: resource.id, time })).toBe(someCall);
    }
  });
});
