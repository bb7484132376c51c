/**
 * The authorization policy (authorization.policyFile, Cedar) through a real gateway on loopback
 * in front of a stdio upstream (test/fixtures/policy-server.mjs), with the official SDK v1 and v2
 * clients on API keys: each rule kind of docs/policy.md's example, lists that show what calls
 * allow, denies audited and counted with the deciding policy's id, a reload that breaks the file
 * keeping the running policy, and a broken file refused at start-up and by --check. And for every
 * key, in both eras, in and out of office hours: what each list shows is exactly what calls allow.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Gateway } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { checkConfig } from '../../src/gateway/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import { ROOT, toolText } from '../support/gateway.js';
import { sample } from '../support/metrics.js';
import { capturingLogger } from '../support/log-lines.js';

const FIXTURE = resolve(ROOT, 'test/fixtures/policy-server.mjs');
const EXAMPLE = readFileSync(resolve(ROOT, 'examples/policy/example.cedar'), 'utf8');
const OFFICE = '(context.weekday >= 1 && context.weekday <= 5 && context.hour >= 9 && context.hour < 17)';
const KEYS = {
  ci: 'ci-5e1f0a9d3c7b',
  contractor: 'contractor-8a2d4f6b1e3c',
  alice: 'alice-0b9c8d7e6f5a',
  bob: 'bob-4c3b2a1f0e9d',
  dana: 'dana-7f6e5d4c3b2a',
};
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

// "Office hours" as the test needs them, around the real UTC hour the gateway reads (this hour and the next).
const hour = new Date().getUTCHours();
const NOW = `(context.hour == ${hour} || context.hour == ${(hour + 1) % 24})`;
const policyOpen = () => EXAMPLE.replace(OFFICE, NOW);
const policyClosed = () => EXAMPLE.replace(OFFICE, `!${NOW}`);

const dir = mkdtempSync(join(tmpdir(), 'mcpgw-policy-e2e-'));
const policyFile = join(dir, 'policy.cedar');
const configFile = join(dir, 'gateway.json');
const lines: Array<Record<string, unknown>> = [];
let gateway: Gateway;
let base: string;
const closers: Array<() => Promise<unknown>> = [];

function config(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    logLevel: 'info',
    auth: {
      mode: 'api-key',
      apiKeys: [
        { name: 'ci', sha256: sha256(KEYS.ci) },
        { name: 'contractor', sha256: sha256(KEYS.contractor), scopes: ['contractor'] },
        { name: 'alice', sha256: sha256(KEYS.alice), scopes: ['staff'] },
        { name: 'bob', sha256: sha256(KEYS.bob) },
        { name: 'dana', sha256: sha256(KEYS.dana), scopes: ['contractor', 'staff'] },
      ],
    },
    authorization: { policyFile },
    upstreams: [{ name: 'ops', transport: 'stdio', command: process.execPath, args: [FIXTURE] }],
    ...extra,
  };
}

beforeAll(async () => {
  writeFileSync(policyFile, policyOpen());
  writeFileSync(configFile, JSON.stringify(config()));
  const log = capturingLogger('info', lines);
  gateway = await buildApp(loadConfig(configFile, {}), { logger: log, defaultMetrics: false, configFile });
  base = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  for (const c of closers.splice(0)) await c().catch(() => undefined);
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function v1(key: string): Promise<Client> {
  const client = new Client({ name: 'policy-v1', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  closers.push(() => client.close());
  return client;
}

async function v2(key: string): Promise<V2Client> {
  const client = new V2Client(
    { name: 'policy-v2', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new V2Transport(new URL('/mcp', base), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  closers.push(() => client.close());
  return client;
}

async function refusal(call: Promise<unknown>): Promise<{ code: number; data: Record<string, unknown> }> {
  const err: unknown = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the call should have been refused').toBeDefined();
  const { code, data } = err as McpError;
  return { code, data: data as Record<string, unknown> };
}

const names = (list: { tools: Array<{ name: string }> }) => list.tools.map((t) => t.name).sort();

describe('each rule kind, SDK v1 and v2', () => {
  it('the ci key may call deploy tools only with env: staging (v1, a 2025 session)', async () => {
    const ci = await v1(KEYS.ci);
    expect(names(await ci.listTools())).toEqual(['ops__deploy_app', 'ops__deploy_db']);
    const ran = await ci.callTool({ name: 'ops__deploy_app', arguments: { env: 'staging' } });
    expect(toolText(ran)).toBe('deploy_app ran {"env":"staging"}');
    const prod = await refusal(ci.callTool({ name: 'ops__deploy_app', arguments: { env: 'production' } }));
    expect(prod.code).toBe(-32013);
    expect(prod.data).toMatchObject({
      type: 'POLICY_DENIED',
      action: 'callTool',
      resource: 'ops__deploy_app',
      policies: [],
    });
    const other = await refusal(ci.callTool({ name: 'ops__read_logs', arguments: {} }));
    expect(other.data.type).toBe('POLICY_DENIED');
  });

  it('an argument holding a lone surrogate (valid JSON-RPC, refused by Cedar as JSON) is decided, not an error', async () => {
    const ci = await v1(KEYS.ci);
    const denied = await refusal(ci.callTool({ name: 'ops__deploy_app', arguments: { env: 'staging\ud800' } }));
    expect(denied.data).toMatchObject({ type: 'POLICY_DENIED', policies: [] });
    const ran = await ci.callTool({ name: 'ops__deploy_app', arguments: { env: 'staging', note: '\ud800' } });
    expect(toolText(ran)).toMatch(/^deploy_app ran /);
  });

  it('read-only tools (readOnlyHint) for contractors (v2, stateless 2026-07-28)', async () => {
    const contractor = await v2(KEYS.contractor);
    expect(names(await contractor.listTools())).toEqual(['ops__read_logs', 'ops__search']);
    expect(toolText(await contractor.callTool({ name: 'ops__read_logs', arguments: {} }))).toBe('read_logs ran {}');
    const write = await refusal(contractor.callTool({ name: 'ops__write_note', arguments: {} }));
    expect(write.code).toBe(-32013);
    expect(write.data).toMatchObject({ type: 'POLICY_DENIED', resource: 'ops__write_note' });
    // No permit for prompts or resources: listed empty, and refused when asked for by name.
    expect((await contractor.listPrompts()).prompts).toEqual([]);
    expect((await contractor.listResources()).resources).toEqual([]);
    expect((await refusal(contractor.getPrompt({ name: 'ops__greet' }))).data.type).toBe('POLICY_DENIED');
    expect((await refusal(contractor.readResource({ uri: 'file:///public.txt' }))).data.type).toBe('POLICY_DENIED');
  });

  it('staff may do everything, prompts and resources too, within office hours', async () => {
    const alice = await v1(KEYS.alice);
    expect(names(await alice.listTools())).toHaveLength(5);
    expect((await alice.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['ops__greet', 'ops__secret_prompt']);
    expect(toolText(await alice.callTool({ name: 'ops__write_note', arguments: {} }))).toBe('write_note ran {}');
    const read = await alice.readResource({ uri: 'file:///private.txt' });
    expect(read.contents[0]).toMatchObject({ text: 'content of file:///private.txt' });
  });

  it('no writes outside office hours: a forbid that wins over staff, named in the error, audit and metrics', async () => {
    writeFileSync(policyFile, policyClosed());
    expect((await gateway.reload('api')).outcome).toBe('ok');
    for (const alice of [await v1(KEYS.alice), await v2(KEYS.alice)]) {
      const write = await refusal(alice.callTool({ name: 'ops__write_note', arguments: {} }));
      expect(write.data).toMatchObject({ type: 'POLICY_DENIED', policies: ['no-writes-after-hours'] });
      expect(toolText(await alice.callTool({ name: 'ops__read_logs', arguments: {} }))).toBe('read_logs ran {}');
      // The list follows: a write tool is not shown while no call of it can be allowed.
      expect(names(await alice.listTools())).toEqual(['ops__read_logs', 'ops__search']);
    }
    const audited = lines.filter((l) => l.msg === 'policy denied').map((l) => l.policy as Record<string, unknown>);
    expect(audited).toContainEqual({
      action: 'callTool',
      method: 'tools/call',
      target: 'ops__write_note',
      policies: ['no-writes-after-hours'],
      principal: 'alice',
    });
    const metrics = await (await fetch(new URL('/metrics', base))).text();
    expect(sample(metrics, 'mcpgw_policy_decisions_total', { action: 'callTool', decision: 'deny' })).toBeGreaterThan(
      3,
    );
    expect(sample(metrics, 'mcpgw_policy_decisions_total', { action: 'list', decision: 'allow' })).toBeGreaterThan(3);
  });
});

describe('a policy file that breaks', () => {
  it('a reload that breaks the file is rejected with line and column, and the running policy stays', async () => {
    writeFileSync(policyFile, 'permit (principal, action, resource)\n  when { context.hour > };\n');
    const result = await gateway.reload('api');
    expect(result.outcome).toBe('rejected');
    expect(result.error).toContain(`${policyFile}:2:25: `);
    const alice = await v1(KEYS.alice);
    expect((await refusal(alice.callTool({ name: 'ops__write_note', arguments: {} }))).data).toMatchObject({
      policies: ['no-writes-after-hours'],
    });
    // An unknown attribute is refused the same way (the schema), and so kept out.
    writeFileSync(policyFile, 'permit (principal is Gw::Client, action, resource) when { principal.team == "ops" };');
    const unknown = await gateway.reload('api');
    expect(unknown.outcome).toBe('rejected');
    expect(unknown.error).toMatch(/policy\.cedar:1:\d+: .*attribute `team`/);
    // Fixed: the next reload puts it in force.
    writeFileSync(policyFile, policyOpen());
    expect((await gateway.reload('api')).outcome).toBe('ok');
    expect(toolText(await alice.callTool({ name: 'ops__write_note', arguments: {} }))).toBe('write_note ran {}');
  });

  it('a broken file stops the start, and --check names it', async () => {
    const broken = join(dir, 'broken.cedar');
    writeFileSync(broken, '@id("x")\nforbid (principal, action, resource) when { resource.owner == "me" };\n');
    const file = join(dir, 'broken.json');
    writeFileSync(file, JSON.stringify(config({ authorization: { policyFile: broken } })));
    const loaded = loadConfig(file, {});
    await expect(buildApp(loaded, { logger: createLogger('silent'), defaultMetrics: false })).rejects.toThrow(
      /broken\.cedar:2:\d+: .*attribute `owner`/,
    );
    const checked = await checkConfig(loaded, { log: pino({ level: 'silent' }) });
    expect(checked.errors).toContainEqual(expect.stringMatching(/^authorization\.policyFile: .*broken\.cedar:2:\d+/));
  });
});

describe('anonymous clients, and tool search', () => {
  const ANONYMOUS = [
    '@id("loopback-reads")',
    'permit (principal is Gw::Anonymous, action == Gw::Action::"callTool", resource)',
    '  when { principal.address == "127.0.0.1" && resource.readOnlyHint && resource.upstream == "ops" };',
    '@id("lists")',
    'permit (principal, action == Gw::Action::"list", resource);',
  ].join('\n');
  let open: Gateway;
  let openBase: string;

  beforeAll(async () => {
    const file = join(dir, 'anonymous.cedar');
    writeFileSync(file, ANONYMOUS);
    const configPath = join(dir, 'anonymous.json');
    const { auth: _auth, ...rest } = config({ authorization: { policyFile: file } });
    writeFileSync(configPath, JSON.stringify({ ...rest, toolSearch: { enabled: true, pinned: ['ops__search'] } }));
    open = await buildApp(loadConfig(configPath, {}), { logger: createLogger('silent'), defaultMetrics: false });
    openBase = await open.app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await open?.close();
  });

  it('one principal type told apart by address; call_tool is decided as the call it makes', async () => {
    const client = new Client({ name: 'policy-anonymous', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', openBase)));
    closers.push(() => client.close());
    // Tool search lists its own tools and the pinned ones the policy could allow.
    expect(names(await client.listTools())).toEqual(['call_tool', 'ops__search', 'search_tools']);
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'writes deploys reads logs' } });
    const listed = JSON.stringify(found);
    expect(listed).toContain('ops__read_logs');
    expect(listed).not.toContain('ops__write_note');
    expect(toolText(await client.callTool({ name: 'ops__read_logs', arguments: {} }))).toBe('read_logs ran {}');
    const viaSearch = await client.callTool({
      name: 'call_tool',
      arguments: { name: 'ops__read_logs', arguments: {} },
    });
    expect(toolText(viaSearch)).toBe('read_logs ran {}');
    const denied = await refusal(
      client.callTool({ name: 'call_tool', arguments: { name: 'ops__write_note', arguments: {} } }),
    );
    expect(denied.data).toMatchObject({ type: 'POLICY_DENIED', resource: 'ops__write_note', policies: [] });
  });
});

describe('lists agree with calls, through the gateway', () => {
  // Every argument value a rule of the example tells apart: a tool is callable when one of them is allowed.
  const ARGUMENTS: Array<Record<string, string>> = [{}, { env: 'staging' }, { env: 'production' }];
  type Lister = Pick<Client, 'listTools' | 'listPrompts' | 'listResources'>;
  type Caller = {
    callTool(p: { name: string; arguments: Record<string, string> }): Promise<unknown>;
    getPrompt(p: { name: string }): Promise<unknown>;
    readResource(p: { uri: string }): Promise<unknown>;
  };

  /** Whether `request` was served (false: POLICY_DENIED; any other error fails the test). */
  async function allowed(request: Promise<unknown>): Promise<boolean> {
    try {
      await request;
      return true;
    } catch (err) {
      if ((err as McpError).data && ((err as McpError).data as { type?: string }).type === 'POLICY_DENIED')
        return false;
      throw err;
    }
  }

  /** What `client` is listed, and what of the whole catalog (as staff sees it) it may use. */
  async function listedAndAllowed(client: Lister & Caller, all: Lister) {
    const tools = (await all.listTools()).tools.map((t) => t.name);
    const prompts = (await all.listPrompts()).prompts.map((p) => p.name);
    const uris = (await all.listResources()).resources.map((r) => r.uri);
    const callable: string[] = [];
    for (const name of tools) {
      for (const args of ARGUMENTS) {
        if (await allowed(client.callTool({ name, arguments: args }))) {
          callable.push(name);
          break;
        }
      }
    }
    const gettable: string[] = [];
    for (const name of prompts) if (await allowed(client.getPrompt({ name }))) gettable.push(name);
    const readable: string[] = [];
    for (const uri of uris) if (await allowed(client.readResource({ uri }))) readable.push(uri);
    return {
      listed: {
        tools: (await client.listTools()).tools.map((t) => t.name).sort(),
        prompts: (await client.listPrompts()).prompts.map((p) => p.name).sort(),
        resources: (await client.listResources()).resources.map((r) => r.uri).sort(),
      },
      allowed: { tools: callable.sort(), prompts: gettable.sort(), resources: readable.sort() },
    };
  }

  for (const [hours, policy] of [
    ['in office hours', policyOpen],
    ['out of office hours', policyClosed],
  ] as const) {
    it(`every key, SDK v1 and v2, ${hours}: each list is exactly what its calls allow`, async () => {
      // The whole catalog, listed by the unchanged policy's staff (everything in office hours).
      writeFileSync(policyFile, policyOpen());
      expect((await gateway.reload('api')).outcome).toBe('ok');
      const everything = await v1(KEYS.alice);
      await everything.listTools();
      writeFileSync(policyFile, policy());
      expect((await gateway.reload('api')).outcome).toBe('ok');
      const seen: Record<string, number> = {};
      for (const [name, key] of Object.entries(KEYS)) {
        for (const [era, client] of [
          ['v1', await v1(key)],
          ['v2', await v2(key)],
        ] as const) {
          const { listed, allowed: may } = await listedAndAllowed(client as unknown as Lister & Caller, everything);
          expect(listed, `${name} (${era}, ${hours})`).toEqual(may);
          seen[`${name} ${era}`] = listed.tools.length;
        }
      }
      // Not trivially equal: the keys see different lists.
      expect(new Set(Object.values(seen)).size).toBeGreaterThan(1);
    });
  }
});
