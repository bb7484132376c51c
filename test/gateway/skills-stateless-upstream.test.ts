/**
 * Skills (SEP-2640) of a 2026-07-28 upstream (test/fixtures/skills-server.mjs over HTTP, a real
 * process) beside a 2025 stdio one, behind one gateway, unprefixed: the stateless upstream's skills
 * are listed, got and read (digests checked by the SDK's SkillsClient) by clients of both eras; its
 * caching hints (ttlMs 1234, private) reach 2026-07-28 clients, merged with the gateway's; the two
 * upstreams' clashing pdf-forms skill is listed once, the first upstream's.
 */
import { resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, stdioUpstream, type RunningGateway } from '../support/gateway.js';
import { httpUpstream, startSkillsHttp, type HttpServerProcess } from '../support/http-upstream.js';

const SKILLS_SERVER = resolve(import.meta.dirname, '../fixtures/skills-server.mjs');

let modern: HttpServerProcess;
let gw: RunningGateway;
const clients: Client[] = [];

async function skillsOf(mode: 'legacy' | { pin: string }): Promise<SkillsClient> {
  const client = new Client({ name: 'skills-stateless', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(gw.url));
  clients.push(client);
  return new SkillsClient(client);
}

beforeAll(async () => {
  modern = await startSkillsHttp({ SKILLS_SET: 'beta' });
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        httpUpstream('modern', modern.url),
        stdioUpstream('classic', SKILLS_SERVER, { env: { SKILLS_SET: 'alpha' } }),
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.stop();
  await modern?.stop();
});

describe.each([
  ['a 2025 session', 'legacy'],
  ['a 2026-07-28 client', { pin: '2026-07-28' }],
] as const)('a 2026-07-28 upstream’s skills, %s', (_label, mode) => {
  it('lists both upstreams’ skills, the clashing URI once (the first upstream’s)', async () => {
    const listing = await (await skillsOf(mode)).list();
    expect(listing.skills.map((s) => s.uri).sort()).toEqual([
      'skill://csv/SKILL.md',
      'skill://pdf-forms/SKILL.md',
      'skill://release-notes/SKILL.md',
    ]);
    const pdf = listing.skills.find((s) => s.uri === 'skill://pdf-forms/SKILL.md');
    expect(pdf?.frontmatter.description).toBe('Fill PDF forms (beta)');
    if (typeof mode === 'object') expect(listing).toMatchObject({ ttlMs: 1234, cacheScope: 'private' });
    else expect(listing.ttlMs).toBeUndefined();
  });

  it('gets and reads the stateless upstream’s skill, files verified', async () => {
    const skills = await skillsOf(mode);
    const got = await skills.get('skill://release-notes/SKILL.md');
    if (typeof mode === 'object') expect(got).toMatchObject({ ttlMs: 1234, cacheScope: 'private' });
    expect((await skills.read(got.skill)).verified).toBe(true);
    const notes = await skills.read(got.skill, 'templates/notes.md');
    expect(notes).toMatchObject({ verified: true, text: '## Changes\n\n- ...\n' });
    // The 2025 upstream's unclashing skill is routed to it by its listing.
    const csv = await skills.get('skill://csv/SKILL.md');
    expect((await skills.read(csv.skill)).frontmatter).toEqual({ name: 'csv', description: 'Clean CSV files' });
  });
});
