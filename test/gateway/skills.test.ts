/**
 * SEP-2640's skills through the gateway: two upstreams with skills (test/fixtures/skills-server.mjs,
 * real processes), each with a pdf-forms skill at the same URI, kept apart by their prefixes
 * (`skill://<prefix>/<path>`, still skill URIs). The SDK's own SkillsClient (@modelcontextprotocol/client
 * 2.4) lists both sets across their pages, gets one, reads its files and checks their digests, in a
 * 2025 session and as a 2026-07-28 client; a virtual server that selects one skill shows only it.
 * Bad input: an unknown skill, a file whose bytes do not match its digest (refused), a skill URI of an
 * upstream that is down, resources/directory/read of an upstream that does not serve it, an override
 * keyed by a skill URI (refused by the config check: overrides are tools only).
 */
import { resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SKILLS_EXTENSION_ID, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/gateway/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import { exampleConfig, startGateway, stdioUpstream, type RunningGateway } from '../support/gateway.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';

const SKILLS_SERVER = resolve(import.meta.dirname, '../fixtures/skills-server.mjs');

const skillsUpstream = (name: string, env: Record<string, string>, extra: Record<string, unknown> = {}) =>
  stdioUpstream(name, SKILLS_SERVER, { env, resources: { uris: 'prefixed' }, ...extra });

/** Lists and serves one skill:// resource, declaring no skills extension. */
const PLAIN_SERVER = rawStdioServer(`
  switch (m.method) {
    case 'initialize':
      return {
        protocolVersion: m.params.protocolVersion,
        capabilities: { resources: {} },
        serverInfo: { name: 'plain', version: '1' },
      };
    case 'resources/list':
      return { resources: [{ uri: 'skill://notes/SKILL.md', name: 'notes' }] };
    case 'resources/read':
      return { contents: [{ uri: m.params.uri, text: 'plain notes' }] };
    default:
      return {};
  }`);

let gw: RunningGateway;
const clients: Client[] = [];

async function connect(url: URL, mode: 'legacy' | { pin: string }): Promise<Client> {
  const client = new Client({ name: 'skills-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(url));
  clients.push(client);
  return client;
}

/** Any result: a raw request of a method the SDK does not know takes a schema, and this one takes all. */
const ANY_RESULT = { '~standard': { version: 1, vendor: 'test', validate: (value: unknown) => ({ value }) } } as const;

async function rawRequest(client: Client, method: string, params: Record<string, unknown>): Promise<unknown> {
  return client.request({ method, params }, ANY_RESULT);
}

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        skillsUpstream('alpha', { SKILLS_SET: 'alpha', SKILLS_DIRECTORY: '1' }),
        skillsUpstream('beta', { SKILLS_SET: 'beta' }),
      ],
      servers: [{ path: '/mcp/pdf', skills: ['skill://alpha/pdf-forms/*'] }],
      // Four skills: two pages of the gateway's own, over each upstream's pages of one.
      pagination: { pageSize: 3 },
    }),
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.stop();
});

const ERAS = [
  ['a 2025 session', 'legacy'],
  ['a 2026-07-28 client', { pin: '2026-07-28' }],
] as const;

describe.each(ERAS)('skills through the gateway, %s', (_label, mode) => {
  it('declares the extension, with directoryRead since one upstream serves it', async () => {
    const client = await connect(gw.url, mode);
    expect(client.getServerCapabilities()?.extensions?.[SKILLS_EXTENSION_ID]).toEqual({ directoryRead: true });
  });

  it('lists both sets, every page, each skill URI prefixed inside skill://', async () => {
    const skills = new SkillsClient(await connect(gw.url, mode));
    const listing = await skills.list();
    expect(listing.skills.map((s) => s.uri).sort()).toEqual([
      'skill://alpha/csv/SKILL.md',
      'skill://alpha/pdf-forms/SKILL.md',
      'skill://beta/pdf-forms/SKILL.md',
      'skill://beta/release-notes/SKILL.md',
    ]);
    const pdf = listing.skills.find((s) => s.uri === 'skill://beta/pdf-forms/SKILL.md');
    expect(pdf?.frontmatter).toEqual({ name: 'pdf-forms', description: 'Fill PDF forms (beta)' });
    if (typeof mode === 'object') {
      expect(listing.cacheScope).toBe('public');
      expect(listing.ttlMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('pages the merged list with its own cursors, one continuing where the last page ended', async () => {
    const client = await connect(gw.url, mode);
    const first = (await rawRequest(client, 'skills/list', {})) as {
      skills: Array<{ uri: string }>;
      nextCursor: string;
    };
    expect(first.skills).toHaveLength(3);
    const second = (await rawRequest(client, 'skills/list', { cursor: first.nextCursor })) as typeof first;
    expect(second.skills).toHaveLength(1);
    expect(second.nextCursor).toBeUndefined();
    expect(new Set([...first.skills, ...second.skills].map((s) => s.uri)).size).toBe(4);
    await expect(rawRequest(client, 'skills/list', { cursor: 'not-ours' })).rejects.toMatchObject({ code: -32602 });
  });

  it('gets one skill and reads its files, digests checked by the SDK', async () => {
    const skills = new SkillsClient(await connect(gw.url, mode));
    const { skill } = await skills.get('skill://alpha/pdf-forms/SKILL.md');
    expect(Array.isArray(skill.resources) && skill.resources.map((r) => r.uri)).toEqual([
      'skill://alpha/pdf-forms/SKILL.md',
      'skill://alpha/pdf-forms/references/FORMS.md',
      'skill://alpha/pdf-forms/scripts/fill.py',
    ]);
    const manifest = await skills.read(skill);
    expect(manifest.verified).toBe(true);
    expect(manifest.frontmatter).toEqual({ name: 'pdf-forms', description: 'Fill PDF forms (alpha)' });
    const forms = await skills.read(skill, 'references/FORMS.md');
    expect(forms).toMatchObject({ verified: true, uri: 'skill://alpha/pdf-forms/references/FORMS.md' });
    expect(forms.text).toContain('case-sensitive');
    expect((await skills.read(skill, 'scripts/fill.py')).verified).toBe(true);
  });

  it('reads a skill directory of the upstream that serves resources/directory/read', async () => {
    const skills = new SkillsClient(await connect(gw.url, mode));
    expect(skills.directoryRead).toBe(true);
    const { resources } = await skills.readDirectory('skill://alpha/pdf-forms/');
    expect(resources.map((r) => [r.uri, r.mimeType]).sort()).toEqual([
      ['skill://alpha/pdf-forms/SKILL.md', 'text/markdown'],
      ['skill://alpha/pdf-forms/references/', 'inode/directory'],
      ['skill://alpha/pdf-forms/scripts/', 'inode/directory'],
    ]);
  });
});

describe('a virtual server that selects one skill', () => {
  it.each(ERAS)('lists, gets and reads only it (%s)', async (_label, mode) => {
    const client = await connect(new URL('/mcp/pdf', gw.base), mode);
    const skills = new SkillsClient(client);
    const listing = await skills.list();
    expect(listing.skills.map((s) => s.uri)).toEqual(['skill://alpha/pdf-forms/SKILL.md']);
    expect((await skills.read(listing.skills[0]!, 'references/FORMS.md')).verified).toBe(true);
    await expect(rawRequest(client, 'skills/get', { uri: 'skill://beta/pdf-forms/SKILL.md' })).rejects.toThrow(
      /not found/i,
    );
    await expect(
      rawRequest(client, 'resources/read', { uri: 'skill://beta/release-notes/templates/notes.md' }),
    ).rejects.toThrow(/not found/i);
    // Its skill's directory is there; the upstream's whole tree above it is not.
    expect((await skills.readDirectory('skill://alpha/pdf-forms/references/')).resources).toHaveLength(1);
    await expect(rawRequest(client, 'resources/directory/read', { uri: 'skill://alpha/' })).rejects.toThrow(
      /not found/i,
    );
  });
});

describe('bad input', () => {
  let bad: RunningGateway;
  beforeAll(async () => {
    bad = await startGateway(
      exampleConfig({
        upstreams: [
          skillsUpstream('tampered', { SKILLS_SET: 'alpha', SKILLS_BAD_DIGEST: '1' }),
          // Configured, never up: its skill URIs name an upstream that is gone.
          stdioUpstream('gone', resolve(import.meta.dirname, '../fixtures/no-such-server.mjs'), {
            resources: { uris: 'prefixed' },
          }),
          // skill:// resources without the extension: ordinary resources, read as the catalog routes them.
          {
            name: 'plain',
            transport: 'stdio',
            command: process.execPath,
            args: ['-e', PLAIN_SERVER],
            resources: { uris: 'prefixed' },
          },
        ],
      }),
    );
  }, 30_000);
  afterAll(async () => bad?.stop());

  it('refuses a file whose bytes do not match the digest its upstream lists (SKILL_DIGEST_MISMATCH)', async () => {
    const client = await connect(bad.url, 'legacy');
    const { skill } = await new SkillsClient(client).get('skill://tampered/pdf-forms/SKILL.md');
    const error = await rawRequest(client, 'resources/read', {
      uri: 'skill://tampered/pdf-forms/references/FORMS.md',
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32013, data: { type: 'SKILL_DIGEST_MISMATCH', upstream: 'tampered' } });
    // The untouched files of the same skill still read and verify.
    expect((await new SkillsClient(client).read(skill)).verified).toBe(true);
  });

  it('answers an unknown skill with resource not found, in either era', async () => {
    const legacy = await connect(bad.url, 'legacy');
    // The SDK reports MCP 2025's -32002 as its ResourceNotFoundError (-32602, data.uri only); the URI is the one
    // the client named, not the upstream's own (skill://nope/SKILL.md), so the gateway answered it.
    await expect(rawRequest(legacy, 'skills/get', { uri: 'skill://tampered/nope/SKILL.md' })).rejects.toMatchObject({
      data: { uri: 'skill://tampered/nope/SKILL.md' },
    });
    const stateless = await connect(bad.url, { pin: '2026-07-28' });
    await expect(rawRequest(stateless, 'skills/get', { uri: 'skill://nobody/x/SKILL.md' })).rejects.toMatchObject({
      code: -32602,
      data: { type: 'MODERN_RESOURCE_NOT_FOUND' },
    });
    await expect(rawRequest(legacy, 'skills/get', { uri: 42 })).rejects.toMatchObject({ code: -32602 });
    // Not a skill URI at all: no upstream is asked.
    await expect(rawRequest(legacy, 'skills/get', { uri: 'https://example.com/SKILL.md' })).rejects.toMatchObject({
      data: { uri: 'https://example.com/SKILL.md' },
    });
  });

  it('names the upstream of a skill URI whose upstream is down (UPSTREAM_UNAVAILABLE)', async () => {
    const client = await connect(bad.url, 'legacy');
    await expect(rawRequest(client, 'skills/get', { uri: 'skill://gone/pdf-forms/SKILL.md' })).rejects.toMatchObject({
      code: -32004,
      data: { type: 'UPSTREAM_UNAVAILABLE', upstream: 'gone' },
    });
    await expect(
      rawRequest(client, 'resources/read', { uri: 'skill://gone/pdf-forms/references/FORMS.md' }),
    ).rejects.toMatchObject({ code: -32004 });
    // The list goes on without it.
    expect((await new SkillsClient(client).list()).skills).toHaveLength(2);
  });

  it('reads a skill:// resource of an upstream without the extension as an ordinary resource', async () => {
    const client = await connect(bad.url, 'legacy');
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('skill://plain/notes/SKILL.md');
    const read = await client.readResource({ uri: 'skill://plain/notes/SKILL.md' });
    expect(read.contents[0]).toMatchObject({ uri: 'skill://plain/notes/SKILL.md', text: 'plain notes' });
  });

  it('refuses an override keyed by a skill URI (overrides are tools only) at the config check', async () => {
    const skill = 'skill://alpha/pdf-forms/SKILL.md';
    const config = exampleConfig({
      upstreams: [skillsUpstream('alpha', { SKILLS_SET: 'alpha' })],
      servers: [{ path: '/mcp/pdf', skills: [skill], overrides: { [skill]: { name: 'forms' } } }],
    });
    const { errors } = await checkConfig(config, { log: createLogger('silent') });
    expect(errors).toEqual([
      expect.stringContaining(`servers[0].overrides.${skill}: no tool "${skill}" in the catalog`),
    ]);
  });

  it('refuses resources/directory/read for an upstream that does not declare directoryRead', async () => {
    const client = await connect(bad.url, 'legacy');
    await expect(
      rawRequest(client, 'resources/directory/read', { uri: 'skill://tampered/pdf-forms/' }),
    ).rejects.toMatchObject({ code: -32601, data: { type: 'METHOD_NOT_FOUND', upstream: 'tampered' } });
  });
});
