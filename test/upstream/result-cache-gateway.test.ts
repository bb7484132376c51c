/**
 * The result cache (`cache:`) behind a real gateway, over a 2026-07-28 upstream on loopback that
 * counts its requests and sets its hints per method: a ttl's worth of resources/read and tools/list
 * asked once whoever asks, a private result kept per principal (two API keys) and never served to
 * the other, a list change or resource update dropping what it names at once, a ttlMs of hours cut
 * to cache.maxTtlMs and a negative one not kept, hits and misses in /metrics. And server/discover
 * (not a cache entry: the upstream's set refreshes it) asked once per ttlMs whatever the clients
 * do, its ttlMs bounded alike.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { post, startGateway, type RunningGateway } from '../support/gateway.js';
import { startHintedUpstream, type HintedUpstream } from '../support/hinted-upstream.js';
import { httpUpstream } from '../support/http-upstream.js';
import { sample } from '../support/metrics.js';
import { statelessRequest } from '../support/stateless.js';
import { until } from '../support/wait.js';

const KEY_A = 'cache-key-of-team-a-71c2';
const KEY_B = 'cache-key-of-team-b-0d9e';
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const MAX_TTL_MS = 1500;

let upstream: HintedUpstream;
let gw: RunningGateway;

function config(cache: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      upstreams: [httpUpstream('hinted', upstream.url, { prefix: '', protocolVersion: '2026-07-28', ...extra })],
      auth: {
        mode: 'api-key',
        apiKeys: [
          { name: 'team-a', sha256: sha256(KEY_A) },
          { name: 'team-b', sha256: sha256(KEY_B) },
        ],
      },
      cache: { maxTtlMs: MAX_TTL_MS, ...cache },
    },
    {},
  );
}

async function read(uri: string, key = KEY_A): Promise<string> {
  const { body, headers } = statelessRequest(1, 'resources/read', { uri });
  const res = await post(gw.url, body, { ...headers, authorization: `Bearer ${key}` });
  expect(res.json.error).toBeUndefined();
  return String(res.json.result.contents[0].text);
}

async function metric(outcome: 'hit' | 'miss', method = 'resources/read'): Promise<number> {
  const text = await (await fetch(new URL('/metrics', gw.base))).text();
  return sample(text, 'mcpgw_cache_lookups_total', { upstream: 'hinted', method, outcome });
}

beforeAll(async () => {
  upstream = await startHintedUpstream();
  upstream.hints['tools/list'] = { ttlMs: 60_000, cacheScope: 'public' };
  gw = await startGateway(config());
  await upstream.listening();
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await upstream?.close();
});

beforeEach(() => {
  upstream.hints['resources/read'] = { ttlMs: 60_000, cacheScope: 'public' };
});

describe('the result cache', () => {
  it('asks the upstream one resources/read per ttl, whoever asks (public)', async () => {
    const before = upstream.count('resources/read');
    const hits = await metric('hit');
    const texts = [];
    for (const key of [KEY_A, KEY_B, KEY_A, KEY_B, KEY_A]) texts.push(await read('hint://a', key));
    expect(upstream.count('resources/read')).toBe(before + 1);
    expect(new Set(texts).size).toBe(1);
    expect((await metric('hit')) - hits).toBe(4);
  });

  it('keeps a private result per principal and never serves it to another', async () => {
    upstream.hints['resources/read'] = { ttlMs: 60_000, cacheScope: 'private' };
    const before = upstream.count('resources/read');
    const a1 = await read('hint://b', KEY_A);
    const b1 = await read('hint://b', KEY_B);
    const a2 = await read('hint://b', KEY_A);
    const b2 = await read('hint://b', KEY_B);
    expect(upstream.count('resources/read')).toBe(before + 2);
    expect(a1).not.toBe(b1);
    expect(a2).toBe(a1);
    expect(b2).toBe(b1);
  });

  it('takes a result without cacheScope as private', async () => {
    upstream.hints['resources/read'] = { ttlMs: 60_000 };
    const before = upstream.count('resources/read');
    const a = await read('hint://noscope', KEY_A);
    expect(await read('hint://noscope', KEY_B)).not.toBe(a);
    expect(upstream.count('resources/read')).toBe(before + 2);
  });

  it('drops a read at once on resources/updated of its URI (not of another)', async () => {
    await read('hint://c');
    await read('hint://d');
    const before = upstream.count('resources/read');
    upstream.notify('notifications/resources/updated', { uri: 'hint://c' });
    await until('a read of hint://c upstream', async () => {
      await read('hint://c');
      return upstream.count('resources/read') > before;
    });
    await read('hint://d');
    expect(upstream.count('resources/read')).toBe(before + 1);
  });

  it('answers the catalog from the cache within the ttl, and asks again on list_changed at once', async () => {
    const lists = upstream.count('tools/list');
    // A prompts change refreshes the upstream's lists: its prompts are asked again, its tools come from the cache.
    const prompts = upstream.count('prompts/list');
    upstream.notify('notifications/prompts/list_changed');
    await until('prompts/list upstream', () => upstream.count('prompts/list') > prompts);
    expect(upstream.count('tools/list')).toBe(lists);
    upstream.notify('notifications/tools/list_changed');
    await until('tools/list upstream', () => upstream.count('tools/list') > lists);
    expect(upstream.count('tools/list')).toBe(lists + 1);
  });

  it('cuts a ttlMs of hours to cache.maxTtlMs, and keeps a negative, zero or non-numeric one not at all', async () => {
    upstream.hints['resources/read'] = { ttlMs: 5 * 3600_000, cacheScope: 'public' };
    await read('hint://e');
    const before = upstream.count('resources/read');
    await read('hint://e');
    expect(upstream.count('resources/read')).toBe(before);
    await new Promise((r) => setTimeout(r, MAX_TTL_MS + 200));
    await read('hint://e');
    expect(upstream.count('resources/read')).toBe(before + 1);
    for (const [i, ttlMs] of [-5000, 0, 'soon', Number.MAX_VALUE * 10].entries()) {
      upstream.hints['resources/read'] = { ttlMs, cacheScope: 'public' };
      const n = upstream.count('resources/read');
      await read(`hint://bad-${i}`);
      await read(`hint://bad-${i}`);
      expect(upstream.count('resources/read')).toBe(n + 2);
    }
  });

  // The catalog's doing, with or without the cache: clients' lists are not asked of the upstream one by one.
  it('lists tools to many clients with at most one upstream tools/list per capability set', async () => {
    const lists = upstream.count('tools/list');
    for (const key of [KEY_A, KEY_B, KEY_A, KEY_B])
      for (const caps of [{}, { sampling: {} }]) {
        const { body, headers } = statelessRequest(1, 'tools/list', {
          _meta: { 'io.modelcontextprotocol/clientCapabilities': caps },
        });
        const res = await post(gw.url, body, { ...headers, authorization: `Bearer ${key}` });
        expect(res.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['hinted_tool']);
      }
    expect(upstream.count('tools/list') - lists).toBeLessThanOrEqual(2);
  });
});

describe("a 2026-07-28 upstream's server/discover", () => {
  // What clients ask: the gateway answers server/discover itself; the others go through the upstream's set.
  const CLIENT_REQUESTS: Array<[string, Record<string, unknown>]> = [
    ['server/discover', {}],
    ['tools/list', {}],
    ['resources/read', { uri: 'hint://f' }],
  ];

  /** Stateless requests from two principals, `concurrency` at a time, for `ms`: how many were answered. */
  async function clients(ms: number, concurrency = 4): Promise<number> {
    const until = Date.now() + ms;
    let answered = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, i) => {
        for (let n = 0; Date.now() < until; n++) {
          const key = (i + n) % 2 === 0 ? KEY_A : KEY_B;
          const [method, params] = CLIENT_REQUESTS[n % CLIENT_REQUESTS.length]!;
          const { body, headers } = statelessRequest(n, method, params);
          const res = await post(gw.url, body, { ...headers, authorization: `Bearer ${key}` });
          expect(res.json.error).toBeUndefined();
          answered++;
        }
      }),
    );
    return answered;
  }

  beforeAll(async () => {
    // Its own gateway: no health checks (each asks server/discover as its probe), so what asks is the clients' traffic.
    await gw.stop();
    upstream.hints['server/discover'] = { ttlMs: 1000, cacheScope: 'public' };
    gw = await startGateway(config({}, { health: { intervalMs: 0 } }));
  });

  /** server/discover requests the upstream got while clients asked for `ms`, and how many requests they made. */
  async function discoversDuring(ms: number): Promise<{ discovers: number; requests: number }> {
    const before = upstream.count('server/discover');
    const requests = await clients(ms);
    return { discovers: upstream.count('server/discover') - before, requests };
  }

  it('is asked once per ttlMs, however many clients ask the gateway meanwhile', async () => {
    const started = Date.now();
    const { discovers, requests } = await discoversDuring(3200);
    const elapsed = Date.now() - started;
    expect(requests).toBeGreaterThan(30);
    // One refresh per second at most (the ttl), and at least one: the result did expire.
    expect(discovers).toBeGreaterThanOrEqual(1);
    expect(discovers).toBeLessThanOrEqual(Math.ceil(elapsed / 1000) + 1);
  });

  it('a ttlMs of hours stands cache.maxTtlMs at most, a negative or non-numeric one as long: asked again, never per request', async () => {
    for (const ttlMs of [5 * 3600_000, -5000, 'soon']) {
      upstream.hints['server/discover'] = { ttlMs, cacheScope: 'public' };
      // The current result (ttl 1 s, or the previous case's maxTtlMs) runs out, and the next refresh takes the new ttlMs.
      const taken = upstream.count('server/discover');
      await until(`server/discover with ttlMs ${ttlMs}`, async () => {
        await clients(100, 1);
        return upstream.count('server/discover') > taken;
      });
      const started = Date.now();
      const { discovers, requests } = await discoversDuring(MAX_TTL_MS * 2);
      const elapsed = Date.now() - started;
      expect(requests, String(ttlMs)).toBeGreaterThan(30);
      expect(discovers, String(ttlMs)).toBeGreaterThanOrEqual(1);
      expect(discovers, String(ttlMs)).toBeLessThanOrEqual(Math.ceil(elapsed / MAX_TTL_MS) + 1);
    }
  }, 45_000);
});

describe('a 2025 upstream', () => {
  it('has nothing cached, whatever its results carry', async () => {
    const old = await startHintedUpstream({ session: true });
    old.hints['resources/read'] = { ttlMs: 60_000, cacheScope: 'public' };
    const g = await startGateway(
      resolveConfig(
        {
          listen: { host: '127.0.0.1', port: 0 },
          logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
          upstreams: [httpUpstream('old', old.url, { prefix: '', protocolVersion: '2025-06-18' })],
        },
        {},
      ),
    );
    try {
      for (let i = 0; i < 3; i++) {
        const { body, headers } = statelessRequest(i, 'resources/read', { uri: 'hint://a' });
        expect((await post(g.url, body, headers)).json.result.contents[0].uri).toBe('hint://a');
      }
      expect(old.count('resources/read')).toBe(3);
    } finally {
      await g.stop();
      await old.close();
    }
  });
});
