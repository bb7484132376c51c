/**
 * The policy file reloads live in a gateway process (`node dist/main.js`): an edit of the file
 * alone (the config file untouched) is picked up by the watch, a file left empty by a slow writer
 * is refused until its text arrives, and a broken edit is refused with its line and column in the
 * log while the running policy stays.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { ROOT } from '../support/gateway.js';
import { until } from '../support/wait.js';

const FIXTURE = resolve(ROOT, 'test/fixtures/policy-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'mcpgw-policy-watch-'));
const policyFile = join(dir, 'policy.cedar');
let gw: GatewayProcess | undefined;
let client: Client | undefined;

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const allowing = (tool: string) =>
  `permit (principal, action == Gw::Action::"list", resource);\n` +
  `permit (principal, action == Gw::Action::"callTool", resource) when { resource.name == "ops__${tool}" };\n`;

async function listed(): Promise<string[]> {
  return (await client!.listTools()).tools.map((t) => t.name);
}

it('an edit of the policy file alone is put in force; an empty or broken one is refused and logged', async () => {
  writeFileSync(policyFile, allowing('read_logs'));
  gw = await spawnGateway({
    logLevel: 'info',
    reload: { debounceMs: 50, pollSeconds: 1 },
    authorization: { policyFile },
    upstreams: [{ name: 'ops', transport: 'stdio', command: process.execPath, args: [FIXTURE] }],
  });
  client = new Client({ name: 'policy-watch', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(gw.url));
  expect(await listed()).toEqual(['ops__read_logs']);

  writeFileSync(policyFile, allowing('search'));
  await until('the edited policy is in force', async () => (await listed()).join() === 'ops__search', 15_000);

  // A slow writer: truncated, the file sits empty past the debounce before its text arrives. The
  // empty file is refused, not put in force (it would deny every request, the list included).
  const fd = openSync(policyFile, 'w');
  await until(
    'the empty file is refused in the log',
    () => /policy\.cedar: holds no policy/.test(gw!.output()),
    15_000,
  );
  expect(await listed()).toEqual(['ops__search']);
  writeSync(fd, allowing('read_logs'));
  closeSync(fd);
  await until('the slow edit is in force', async () => (await listed()).join() === 'ops__read_logs', 15_000);

  writeFileSync(policyFile, 'permit (principal, action, resource) when { principal.nope };\n');
  await until('the broken edit is refused in the log', () => /policy\.cedar:1:\d+: /.test(gw!.output()), 15_000);
  expect(await listed()).toEqual(['ops__read_logs']);
});
