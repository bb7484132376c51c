/**
 * Server cards (serverCards, SEP-2127 draft) on a real gateway over loopback, with API keys: the
 * main endpoint's card and a virtual server's (the tool count right, no tool named), each valid
 * against our schema of the draft's card; the AI Catalog listing the cards a caller may see; a
 * card behind its endpoint's own 401 and 403 unless public; ETag revalidation (304) and a new
 * ETag once a reload changes the tool count; 404 SERVER_CARD_NOT_FOUND for a card path of no
 * endpoint (also one a reload took away); a card fetched by curl. With serverCards off: 404.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  ROOT,
  SLOW_SERVER,
  exampleConfig,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { startFromFile } from '../support/reload.js';

const KEY_A = 'card-key-of-team-a-5d1e';
const KEY_B = 'card-key-of-team-b-90c4';
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

const fixture = (name: string) =>
  JSON.parse(readFileSync(resolve(ROOT, 'test/fixtures/server-card', name), 'utf8')) as object;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
const validCard = ajv.compile(fixture('server-card.schema.json'));
const validCatalog = ajv.compile(fixture('ai-catalog.schema.json'));

const ECHOES = { name: 'echoes', path: '/mcp/echoes', tools: ['echo__*'], principals: ['team-a'] };
const OPEN = { name: 'open', path: '/mcp/open', tools: ['slow__*'], card: { public: true, title: 'Slow tools' } };

function cardsConfig(servers: unknown[], upstreams = ['echo', 'slow']): Record<string, unknown> {
  const scripts: Record<string, string> = { echo: ECHO_SERVER, slow: SLOW_SERVER };
  return {
    upstreams: upstreams.map((u) => stdioUpstream(u, scripts[u]!)),
    auth: {
      mode: 'api-key',
      apiKeys: [
        { name: 'team-a', sha256: sha256(KEY_A) },
        { name: 'team-b', sha256: sha256(KEY_B) },
      ],
    },
    serverCards: { enabled: true },
    servers,
  };
}

async function get(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(new URL(path, base), { headers: { accept: 'application/mcp-server-card+json', ...headers } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as any) : undefined };
}

const cleanups: Array<() => Promise<void>> = [];
let gw: Awaited<ReturnType<typeof startFromFile>>;
const toolNames = () => gw.gateway.server.catalog.list('tools').map((t) => String(t.name));

beforeAll(async () => {
  gw = await startFromFile(cardsConfig([ECHOES, OPEN]), cleanups);
}, 30_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('the cards of the main path and of a virtual server', () => {
  it("names the main endpoint's tool count, not its tools, in a card valid against the draft's shape", async () => {
    const r = await get(gw.base, '/mcp/server-card', bearer(KEY_B));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/mcp-server-card+json');
    expect(validCard(r.json), JSON.stringify(validCard.errors)).toBe(true);
    const names = toolNames();
    expect(names.length).toBeGreaterThan(5);
    expect(r.json._meta).toEqual({ 'mcpgw/toolCount': names.length });
    for (const name of names) {
      expect(r.text).not.toContain(name);
      expect(r.text).not.toContain(`"${name.slice(name.indexOf('__') + 2)}"`);
    }
    expect(r.json.remotes[0]).toMatchObject({
      type: 'streamable-http',
      url: `${gw.base}/mcp`,
      headers: [{ name: 'Authorization', isRequired: true, isSecret: true }],
    });
    expect(r.json.remotes[0].supportedProtocolVersions).toContain('2025-11-25');
    expect(r.json.name).toBe('127.0.0.1/mcp-gateway');
  });

  it("counts a virtual server's own selection", async () => {
    const r = await get(gw.base, '/mcp/echoes/server-card', bearer(KEY_A));
    expect(r.status).toBe(200);
    expect(validCard(r.json), JSON.stringify(validCard.errors)).toBe(true);
    const echoTools = toolNames().filter((n) => n.startsWith('echo__'));
    expect(echoTools.length).toBeGreaterThan(1);
    expect(r.json._meta['mcpgw/toolCount']).toBe(echoTools.length);
    expect(r.json.name).toBe('127.0.0.1/echoes');
    expect(r.json.remotes[0].url).toBe(`${gw.base}/mcp/echoes`);
    for (const name of echoTools) {
      expect(r.text).not.toContain(name);
      expect(r.text).not.toContain(`"${name.slice('echo__'.length)}"`);
    }
    expect(r.json).not.toHaveProperty('tools');
    const open = await get(gw.base, '/mcp/open/server-card');
    expect(open.json).toMatchObject({ title: 'Slow tools', _meta: { 'mcpgw/toolCount': toolNames().length - 3 } });
  });
});

describe("a card behind its endpoint's checks", () => {
  it("answers a caller without a key the endpoint's own 401 challenge", async () => {
    const endpoint = await post(new URL('/mcp/echoes', gw.base), { jsonrpc: '2.0', id: 1, method: 'ping' });
    const card = await get(gw.base, '/mcp/echoes/server-card');
    expect(endpoint.status).toBe(401);
    expect(card.status).toBe(401);
    expect(card.headers.get('www-authenticate')).toBe(endpoint.headers.get('www-authenticate'));
    expect(card.json.error).toEqual(endpoint.json.error);
    expect(card.text).not.toContain('toolCount');
    expect((await get(gw.base, '/mcp/server-card')).status).toBe(401);
    expect((await get(gw.base, '/mcp/echoes/server-card', bearer('not-a-key'))).status).toBe(401);
  });

  it("answers a key the server's principals leave out its 403, and a listed key the card", async () => {
    const endpoint = await post(
      new URL('/mcp/echoes', gw.base),
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      bearer(KEY_B),
    );
    const card = await get(gw.base, '/mcp/echoes/server-card', bearer(KEY_B));
    expect(card.status).toBe(403);
    expect(card.json.error).toEqual(endpoint.json.error);
    expect(card.json.error.data.type).toBe('SERVER_FORBIDDEN');
    const mine = await get(gw.base, '/mcp/echoes/server-card', bearer(KEY_A));
    expect(mine.status).toBe(200);
    expect(mine.headers.get('cache-control')).toBe('private, max-age=300');
    expect(mine.headers.get('vary')).toContain('Authorization');
  });

  it('serves a public card to anyone, cacheable by anyone', async () => {
    const r = await get(gw.base, '/mcp/open/server-card');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    // The endpoint itself still wants a key.
    expect((await post(new URL('/mcp/open', gw.base), { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(401);
  });
});

describe('the AI Catalog', () => {
  const listed = async (headers: Record<string, string> = {}) => {
    const r = await get(gw.base, '/.well-known/ai-catalog.json', headers);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/ai-catalog+json');
    expect(validCatalog(r.json), JSON.stringify(validCatalog.errors)).toBe(true);
    return r.json.entries as Array<{ identifier: string; type: string; url: string }>;
  };

  it('lists every card a caller may see, each a link to its card, and no other', async () => {
    const all = await listed(bearer(KEY_A));
    expect(all.map((e) => e.url)).toEqual([
      `${gw.base}/mcp/server-card`,
      `${gw.base}/mcp/echoes/server-card`,
      `${gw.base}/mcp/open/server-card`,
    ]);
    expect(all.map((e) => e.identifier)).toEqual([
      'urn:air:127.0.0.1:mcp:mcp-gateway',
      'urn:air:127.0.0.1:mcp:echoes',
      'urn:air:127.0.0.1:mcp:open',
    ]);
    for (const e of all) expect((await get(gw.base, e.url, bearer(KEY_A))).status).toBe(200);
    expect((await listed(bearer(KEY_B))).map((e) => e.url)).toEqual([
      `${gw.base}/mcp/server-card`,
      `${gw.base}/mcp/open/server-card`,
    ]);
    expect((await listed()).map((e) => e.url)).toEqual([`${gw.base}/mcp/open/server-card`]);
    expect((await listed(bearer('not-a-key'))).map((e) => e.url)).toEqual([`${gw.base}/mcp/open/server-card`]);
  });
});

describe('ETags', () => {
  it('answers If-None-Match with the current tag 304, and anything else the card', async () => {
    const first = await get(gw.base, '/mcp/echoes/server-card', bearer(KEY_A));
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect((await get(gw.base, '/mcp/echoes/server-card', bearer(KEY_A))).headers.get('etag')).toBe(etag);
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get(gw.base, '/mcp/echoes/server-card', { ...bearer(KEY_A), 'if-none-match': tag });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
    }
    const other = await get(gw.base, '/mcp/echoes/server-card', { ...bearer(KEY_A), 'if-none-match': '"other"' });
    expect(other.status).toBe(200);
    // A 304 is no way round the checks: without a key, the tag earns a 401.
    expect((await get(gw.base, '/mcp/echoes/server-card', { 'if-none-match': etag })).status).toBe(401);
  });
});

describe('404 for a card path of no endpoint', () => {
  for (const path of ['/nope/server-card', '/mcp/echoes/x/server-card', '/server-card', '/mcp/nope/server-card']) {
    it(`GET ${path}: 404 SERVER_CARD_NOT_FOUND`, async () => {
      const r = await get(gw.base, path, bearer(KEY_A));
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toContain('application/json');
      expect(r.json.error).toMatchObject({ code: -32000, data: { type: 'SERVER_CARD_NOT_FOUND' } });
    });
  }

  it('a POST there is still no route (ROUTE_NOT_FOUND), and the card route takes no POST', async () => {
    const r = await post(new URL('/nope/server-card', gw.base), {});
    expect(r.status).toBe(404);
    expect(r.json.error.data.type).toBe('ROUTE_NOT_FOUND');
    expect((await post(new URL('/mcp/server-card', gw.base), {})).status).toBe(404);
  });
});

describe('curl', () => {
  it.skipIf(!existsSync('/usr/bin/curl'))('fetches a card as a client would', async () => {
    // Not execFileSync: the gateway answers from this very process, whose loop must keep turning.
    const { stdout: out } = await promisify(execFile)(
      '/usr/bin/curl',
      ['-sS', '-i', '-H', 'Accept: application/mcp-server-card+json', `${gw.base}/mcp/open/server-card`],
      { encoding: 'utf8', timeout: 10_000 },
    );
    const [head, body] = out.split('\r\n\r\n') as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.toLowerCase()).toContain('content-type: application/mcp-server-card+json');
    expect(head.toLowerCase()).toMatch(/etag: "[a-z0-9_-]{43}"/);
    const card = JSON.parse(body) as { name: string };
    expect(validCard(card), JSON.stringify(validCard.errors)).toBe(true);
    expect(card.name).toBe('127.0.0.1/open');
  });
});

describe('a reload', () => {
  it('changes the tool count and the ETag at once, and a removed server has no card left', async () => {
    const before = await get(gw.base, '/mcp/echoes/server-card', bearer(KEY_A));
    const mainBefore = await get(gw.base, '/mcp/server-card', bearer(KEY_A));
    const echoCount = toolNames().filter((n) => n.startsWith('echo__')).length;
    // The server selects less, and the slow upstream (with its tools) goes from the catalog.
    gw.file.write(cardsConfig([{ ...ECHOES, tools: ['echo__echo'] }], ['echo']));
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    const after = await get(gw.base, '/mcp/echoes/server-card', bearer(KEY_A));
    expect(after.json._meta['mcpgw/toolCount']).toBe(1);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    const mainAfter = await get(gw.base, '/mcp/server-card', bearer(KEY_A));
    expect(mainAfter.json._meta['mcpgw/toolCount']).toBe(echoCount);
    expect(mainBefore.json._meta['mcpgw/toolCount']).toBeGreaterThan(echoCount);
    expect(mainAfter.headers.get('etag')).not.toBe(mainBefore.headers.get('etag'));
    const stale = await get(gw.base, '/mcp/echoes/server-card', {
      ...bearer(KEY_A),
      'if-none-match': before.headers.get('etag')!,
    });
    expect(stale.status).toBe(200);
    const gone = await get(gw.base, '/mcp/open/server-card');
    expect(gone.status).toBe(404);
    expect(gone.json.error.data.type).toBe('SERVER_CARD_NOT_FOUND');
    const catalog = await get(gw.base, '/.well-known/ai-catalog.json', bearer(KEY_A));
    expect(catalog.json.entries.map((e: { url: string }) => e.url)).toEqual([
      `${gw.base}/mcp/server-card`,
      `${gw.base}/mcp/echoes/server-card`,
    ]);
  });
});

describe('serverCards off (the default), and on without auth', () => {
  let off: RunningGateway;
  let open: RunningGateway;
  beforeAll(async () => {
    off = await startGateway(exampleConfig({ servers: [{ path: '/mcp/echoes', tools: ['echo__*'] }] }));
    open = await startGateway(
      exampleConfig({
        serverCards: { enabled: true, baseUrl: 'https://mcp.example.com', description: 'Tools of Example' },
        servers: [{ path: '/mcp/echoes', tools: ['echo__*'] }],
      }),
    );
  }, 30_000);
  afterAll(async () => {
    await off?.stop();
    await open?.stop();
  });

  it('off: no card and no catalog (404)', async () => {
    for (const path of ['/mcp/server-card', '/mcp/echoes/server-card', '/.well-known/ai-catalog.json']) {
      const r = await get(off.base, path);
      expect(r.status).toBe(404);
      expect(r.json.error.data.type).toBe('ROUTE_NOT_FOUND');
    }
  });

  it('on without auth: every card public, named after baseUrl, no Authorization header asked for', async () => {
    const r = await get(open.base, '/mcp/server-card');
    expect(r.status).toBe(200);
    expect(validCard(r.json), JSON.stringify(validCard.errors)).toBe(true);
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    expect(r.json).toMatchObject({
      name: 'com.example.mcp/mcp-gateway',
      description: 'Tools of Example',
      // Legacy HTTP+SSE is on by default: the main endpoint's card names its stream too.
      remotes: [
        { type: 'streamable-http', url: 'https://mcp.example.com/mcp' },
        { type: 'sse', url: 'https://mcp.example.com/sse' },
      ],
    });
    expect(r.json.remotes[0].headers).toBeUndefined();
    const server = await get(open.base, '/mcp/echoes/server-card');
    expect(server.json.name).toBe('com.example.mcp/mcp-echoes');
    const catalog = await get(open.base, '/.well-known/ai-catalog.json');
    expect(catalog.headers.get('cache-control')).toBe('public, max-age=300');
    expect(catalog.json.entries.map((e: { url: string }) => e.url)).toEqual([
      'https://mcp.example.com/mcp/server-card',
      'https://mcp.example.com/mcp/echoes/server-card',
    ]);
    const pointer = await (await fetch(new URL('/', open.base))).text();
    expect(pointer).toContain('server cards: <endpoint>/server-card, listed in /.well-known/ai-catalog.json');
    expect(await (await fetch(new URL('/', off.base))).text()).not.toContain('server card');
    const head = await fetch(new URL('/mcp/server-card', open.base), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(r.headers.get('etag'));
  });
});

describe('cards with OAuth (jwt) auth', () => {
  let issuer: JwtIssuer;
  let jwt: RunningGateway;
  beforeAll(async () => {
    issuer = await startJwtIssuer();
    jwt = await startGateway(exampleConfig({ auth: issuer.authConfig, serverCards: { enabled: true } }));
  }, 30_000);
  afterAll(async () => {
    await jwt?.stop();
    await issuer?.close();
  });

  it("answers a card without a token the endpoint's resource_metadata challenge, and a token holder the card", async () => {
    const endpoint = await post(jwt.url, { jsonrpc: '2.0', id: 1, method: 'ping' });
    const card = await get(jwt.base, '/mcp/server-card');
    expect(card.status).toBe(401);
    expect(card.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect(card.headers.get('www-authenticate')).toBe(endpoint.headers.get('www-authenticate'));
    const held = await get(jwt.base, '/mcp/server-card', await issuer.bearer('alice'));
    expect(held.status).toBe(200);
    expect(held.json.remotes[0].headers[0].description).toContain('OAuth');
    expect((await get(jwt.base, '/.well-known/ai-catalog.json')).json.entries).toEqual([]);
  });
});
