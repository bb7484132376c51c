// Captures the tool lists of real public MCP servers (installed outside the repository, e.g.
// `npm install --prefix /tmp/mcpcap --ignore-scripts @modelcontextprotocol/server-github ...`)
// into catalog.json, for quality.mjs. Each server runs under no-outbound.cjs with dummy
// credentials: only its tools/list is asked, and any call out is refused and reported.
//
//   node load/tool-search/capture.mjs /tmp/mcpcap
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const prefix = resolve(process.argv[2] ?? '/tmp/mcpcap');
const here = import.meta.dirname;
const scratch = mkdtempSync(join(tmpdir(), 'mcpcap-'));

/** [upstream name, package, extra args, env]: dummy credentials, never used (only tools/list). */
const SERVERS = [
  ['filesystem', '@modelcontextprotocol/server-filesystem', [scratch], {}],
  ['memory', '@modelcontextprotocol/server-memory', [], { MEMORY_FILE_PATH: join(scratch, 'memory.json') }],
  ['everything', '@modelcontextprotocol/server-everything', [], {}],
  ['sequential-thinking', '@modelcontextprotocol/server-sequential-thinking', [], {}],
  ['github', '@modelcontextprotocol/server-github', [], { GITHUB_PERSONAL_ACCESS_TOKEN: 'dummy' }],
  ['gitlab', '@modelcontextprotocol/server-gitlab', [], { GITLAB_PERSONAL_ACCESS_TOKEN: 'dummy' }],
  ['slack', '@modelcontextprotocol/server-slack', [], { SLACK_BOT_TOKEN: 'dummy', SLACK_TEAM_ID: 'T0' }],
  ['postgres', '@modelcontextprotocol/server-postgres', ['postgresql://127.0.0.1:1/none'], {}],
  // A live Redis on loopback (its server connects at start): CAPTURE_REDIS_URL, e.g. a throwaway redis-server.
  ['redis', '@modelcontextprotocol/server-redis', [process.env.CAPTURE_REDIS_URL ?? 'redis://127.0.0.1:6379'], {}],
  ['puppeteer', '@modelcontextprotocol/server-puppeteer', [], {}],
  ['google-maps', '@modelcontextprotocol/server-google-maps', [], { GOOGLE_MAPS_API_KEY: 'dummy' }],
  ['brave-search', '@modelcontextprotocol/server-brave-search', [], { BRAVE_API_KEY: 'dummy' }],
  ['aws-kb-retrieval', '@modelcontextprotocol/server-aws-kb-retrieval', [], { AWS_REGION: 'us-east-1' }],
  ['everart', '@modelcontextprotocol/server-everart', [], { EVERART_API_KEY: 'dummy' }],
];

const servers = [];
for (const [name, pkg, args, env] of SERVERS) {
  const dir = join(prefix, 'node_modules', pkg);
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  } catch {
    console.error(`${name}: ${pkg} not installed under ${prefix}`);
    continue;
  }
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--require', join(here, 'no-outbound.cjs'), join(dir, bin), ...args],
    env: { PATH: process.env.PATH ?? '', HOME: scratch, ...env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'mcpgw-capture', version: '1' });
  try {
    await client.connect(transport);
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const outbound = stderr.split('\n').filter((l) => l.startsWith('OUTBOUND'));
    servers.push({ name, package: pkg, version: manifest.version, outbound, tools });
    console.error(
      `${name} ${manifest.version}: ${tools.length} tools${outbound.length ? `, ${outbound.join('; ')}` : ''}`,
    );
  } catch (err) {
    console.error(`${name}: failed: ${err.message}\n${stderr.slice(0, 500)}`);
  } finally {
    await client.close().catch(() => undefined);
  }
}
writeFileSync(
  join(here, 'catalog.json'),
  `${JSON.stringify({ captured: new Date().toISOString(), servers }, null, 1)}\n`,
);
console.error(`${servers.reduce((n, s) => n + s.tools.length, 0)} tools from ${servers.length} servers`);
