/**
 * `upstreams[].resources: { uris: prefixed }`: two copies of server-everything behind one
 * gateway. Their resource URIs collide as they are (a start-up error whose advice names the
 * key); prefixed (`<prefix>+<uri>`), both copies' resources and templates are listed, read,
 * subscribed to and linked from tool results under the client's URIs, and the upstream sees
 * its own.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createLogger } from '../../src/observability/logger.js';
import { exampleConfig, startGateway, type RunningGateway } from '../support/gateway.js';
import { connectClient, everythingUpstream } from '../support/everything.js';
import { until } from '../support/wait.js';

const DOC = 'demo://resource/static/document/features.md';
const PREFIXED = { resources: { uris: 'prefixed' } };

let gw: RunningGateway;
let client: Client;
const updates: string[] = [];

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [everythingUpstream('a', PREFIXED), everythingUpstream('b', { ...PREFIXED, prefix: 'copy-b' })],
      servers: [{ path: '/mcp/b-docs', resources: ['copy-b+demo://resource/static/*'] }],
    }),
  );
  client = (await connectClient(gw.url)).client;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.stop();
});

describe('two copies of one server, URIs prefixed', () => {
  it("lists both copies' resources and templates under their prefixes", async () => {
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    expect(uris).toContain(`a+${DOC}`);
    expect(uris).toContain(`copy-b+${DOC}`);
    expect(uris.every((u) => u.startsWith('a+demo://') || u.startsWith('copy-b+demo://'))).toBe(true);
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates).toEqual(
      expect.arrayContaining([
        'a+demo://resource/dynamic/text/{resourceId}',
        'copy-b+demo://resource/dynamic/text/{resourceId}',
      ]),
    );
  });

  it('reads from each copy, the contents naming the URI as the client asked for it', async () => {
    for (const prefix of ['a', 'copy-b']) {
      const read = await client.readResource({ uri: `${prefix}+${DOC}` });
      expect(read.contents).toHaveLength(1);
      expect(read.contents[0]).toMatchObject({ uri: `${prefix}+${DOC}`, mimeType: 'text/markdown' });
      const templated = await client.readResource({ uri: `${prefix}+demo://resource/dynamic/text/5` });
      expect(templated.contents[0]).toMatchObject({ uri: `${prefix}+demo://resource/dynamic/text/5` });
    }
    // The URI as the upstream knows it is no URI of the gateway's.
    await expect(client.readResource({ uri: DOC })).rejects.toThrow(/Resource not found/);
  });

  it('prefixes the resource links of a tool result', async () => {
    const result = await client.callTool({ name: 'copy-b__get-resource-links', arguments: { count: 2 } });
    const links = (result.content as Array<{ type: string; uri?: string }>).filter((c) => c.type === 'resource_link');
    expect(links.length).toBe(2);
    for (const l of links) expect(l.uri).toMatch(/^copy-b\+demo:\/\/resource\/dynamic\//);
    // And such a link reads back.
    expect((await client.readResource({ uri: links[0]!.uri! })).contents[0]!.uri).toBe(links[0]!.uri);
  });

  it('delivers resource updates under the prefixed URI', async () => {
    await client.subscribeResource({ uri: `a+${DOC}` });
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('a__toggle-subscriber-updates');
    await client.callTool({ name: 'a__toggle-subscriber-updates', arguments: {} });
    await until('a resource update', () => updates.length > 0, 10_000);
    expect(updates[0]).toBe(`a+${DOC}`);
    await client.callTool({ name: 'a__toggle-subscriber-updates', arguments: {} });
  });

  it('selects prefixed URIs on a virtual server by their prefixed form', async () => {
    const docs = (await connectClient(new URL('/mcp/b-docs', gw.base))).client;
    try {
      const uris = (await docs.listResources()).resources.map((r) => r.uri);
      expect(uris.length).toBeGreaterThan(0);
      expect(uris.every((u) => u.startsWith('copy-b+demo://resource/static/'))).toBe(true);
      expect((await docs.readResource({ uri: `copy-b+${DOC}` })).contents).toHaveLength(1);
      await expect(docs.readResource({ uri: `a+${DOC}` })).rejects.toThrow(/Resource not found/);
    } finally {
      await docs.close();
    }
  });
});

describe('prefixed URIs of a per-session upstream', () => {
  it('reads under the prefix and delivers its worker’s updates under it', async () => {
    const own = await startGateway(
      exampleConfig({
        upstreams: [everythingUpstream('p', { ...PREFIXED, mode: 'per-session', pool: { max: 2, spares: 0 } })],
      }),
    );
    const mine = (await connectClient(own.url)).client;
    const heard: string[] = [];
    mine.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      heard.push(n.params.uri);
    });
    try {
      expect((await mine.readResource({ uri: `p+${DOC}` })).contents[0]).toMatchObject({ uri: `p+${DOC}` });
      await mine.subscribeResource({ uri: `p+${DOC}` });
      await mine.callTool({ name: 'p__toggle-subscriber-updates', arguments: {} });
      await until('a resource update', () => heard.length > 0, 10_000);
      expect(heard[0]).toBe(`p+${DOC}`);
      await mine.callTool({ name: 'p__toggle-subscriber-updates', arguments: {} });
    } finally {
      await mine.close().catch(() => undefined);
      await own.stop();
    }
  });
});

describe('two copies without prefixed URIs', () => {
  it('fails the start naming the key that fixes it', async () => {
    const config = exampleConfig({ upstreams: [everythingUpstream('a'), everythingUpstream('b')] });
    const err = await buildApp(config, { logger: createLogger('silent'), defaultMetrics: false }).then(
      async (g) => {
        await g.close();
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(
      /^resources name collision: "demo:\/\/resource\/.*" is offered by upstream "a" and by upstream "b"; set `resources: \{ uris: prefixed \}` on upstream "b"/,
    );
  });

  it('refuses prefixed URIs with an empty prefix', () => {
    expect(() => exampleConfig({ upstreams: [everythingUpstream('a', { ...PREFIXED, prefix: '' })] })).toThrow(
      /upstreams\[0\]\.resources\.uris: "prefixed" needs a prefix that is not empty/,
    );
  });
});
