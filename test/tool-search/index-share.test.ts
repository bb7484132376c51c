/**
 * Large indexes kept in a real Redis for the other processes (tool-search/index-share.ts,
 * redis-index-share.ts): the first build keeps its index, a later one loads it and ranks the
 * same; what it loads is what Redis holds (a planted index answers); a damaged index, an
 * unreachable Redis or a list changed by one word means a build of its own; small lists are not
 * kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { connectRedis, type RedisClient } from '../../src/redis/connection.js';
import { indexKey } from '../../src/tool-search/index-share.js';
import { RedisIndexShare } from '../../src/tool-search/redis-index-share.js';
import {
  THREAD_FROM_TOOLS,
  sharedIndexKey,
  sharedToolRanker,
  threadRanker,
} from '../../src/tool-search/search-thread.js';
import { freePort, startRedis, type RedisServer } from '../support/redis.js';
import { REAL_TOOLS, rankings, syntheticTools } from '../support/search-tools.js';

const TOOLS = [...REAL_TOOLS, ...syntheticTools(THREAD_FROM_TOOLS)];
const log = createLogger('silent');

let redis: RedisServer;
const clients: RedisClient[] = [];

/** A share under `prefix` and its connection, ready (offline, commands fail at once) unless `url` has no Redis. */
async function share(prefix: string, url = redis.url): Promise<{ share: RedisIndexShare; client: RedisClient }> {
  const client = connectRedis({ target: { url }, name: 'index-share-test' });
  client.on('error', () => undefined);
  clients.push(client);
  if (url === redis.url) await new Promise((resolve) => client.once('ready', resolve));
  return { share: new RedisIndexShare(client, prefix, log), client };
}

/** The keys under `prefix`, once `count` are there (a built index is kept after its ranker is handed out). */
async function keptKeys(client: RedisClient, prefix: string, count = 1): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length >= count) return keys;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`fewer than ${count} index(es) kept under ${prefix}`);
}

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis?.stop();
});

describe('tool search indexes shared through Redis', () => {
  it('the first build keeps its index; a later one loads it and ranks as a build of its own does', async () => {
    const { share: kept, client } = await share('a:');
    const first = await sharedToolRanker(kept)(TOOLS);
    expect(first.origin).toBe('built');
    const [key] = await keptKeys(client, 'a:');
    expect(Number(await client.strlen(key!))).toBeGreaterThan(100_000);
    expect(await client.pttl(key!)).toBeGreaterThan(23 * 3_600_000);

    const later = await sharedToolRanker((await share('a:')).share)(TOOLS);
    expect(later.origin).toBe('loaded');
    const expected = await rankings(await threadRanker(TOOLS), 10);
    expect(expected.filter((r) => r.length > 0).length).toBeGreaterThan(50);
    expect(await rankings(later, 10)).toEqual(expected);
    expect(await rankings(first, 10)).toEqual(expected);
  });

  it('answers from what Redis holds: an index planted under the key is the one searched', async () => {
    // Unique names, so that a name says which tool (synthetic names repeat).
    const tools = TOOLS.map((t, i) => ({ ...t, name: `${t.name}_${i}` }));
    const reversed = [...tools].reverse();
    // The reversed list's index, kept under its own key, then planted under the key of `tools`.
    const { share: kept, client } = await share('b:');
    await sharedToolRanker(kept)(reversed);
    const [plantedFrom] = await keptKeys(client, 'b:');
    await client.set(`b:${await sharedIndexKey(tools)}`, (await client.get(plantedFrom!))!);

    const loaded = await sharedToolRanker(kept)(tools);
    expect(loaded.origin).toBe('loaded');
    // The planted index answers with ids of `reversed`, which this list reads as its own: id i is tools[i].
    const query = 'send a message to a channel';
    const place = new Map(reversed.map((t, i) => [t.name, i]));
    const planted = (await (await threadRanker(reversed)).search(query, 10)).map((n) => tools[place.get(n)!]!.name);
    expect(await loaded.search(query, 10)).toEqual(planted);
    expect(planted).not.toEqual(await (await threadRanker(tools)).search(query, 10));
  });

  it('builds its own when the kept index is damaged, of another list size, or Redis is unreachable', async () => {
    const expected = await rankings(await threadRanker(TOOLS), 10);
    const { share: kept, client } = await share('d:');
    const key = await sharedIndexKey(TOOLS);
    for (const damaged of ['not json', '{"documentCount":1}', '']) {
      await client.set(`d:${key}`, damaged);
      const ranker = await sharedToolRanker(kept)(TOOLS);
      expect(ranker.origin).toBe('built');
      expect(await rankings(ranker, 10)).toEqual(expected);
    }
    // Another list's index under this list's key (a count that differs): refused, built.
    const small = await share('e:');
    await sharedToolRanker(small.share)(TOOLS.slice(0, THREAD_FROM_TOOLS));
    const [smallKey] = await keptKeys(small.client, 'e:');
    await client.set(`d:${key}`, (await client.get(smallKey!))!);
    expect((await sharedToolRanker(kept)(TOOLS)).origin).toBe('built');

    const nowhere = await share('f:', `redis://127.0.0.1:${await freePort()}`);
    const alone = await sharedToolRanker(nowhere.share)(TOOLS);
    expect(alone.origin).toBe('built');
    expect(await rankings(alone, 10)).toEqual(expected);
  });

  it('a Redis that takes the command and never answers holds a build for the wait only', async () => {
    // A command timeout of a minute: were the wait (300 ms) not applied, this test would time out.
    const client = connectRedis({ target: { url: redis.url }, name: 'index-share-test', commandTimeoutMs: 60_000 });
    clients.push(client);
    await new Promise((resolve) => client.once('ready', resolve));
    const kept = new RedisIndexShare(client, 'h:', log, 300);
    await sharedToolRanker(kept)(TOOLS);
    await keptKeys(client, 'h:'); // kept: a later build would load it if Redis answered
    redis.pause();
    try {
      expect((await sharedToolRanker(kept)(TOOLS)).origin).toBe('built');
    } finally {
      redis.resume();
    }
  });

  it('a list changed by one word has another key; a small list is not kept at all', async () => {
    const changed = TOOLS.map((t, i) => (i === 7 ? { ...t, description: `${t.description} urgently` } : t));
    expect(await sharedIndexKey(changed)).not.toBe(await sharedIndexKey(TOOLS));
    expect(await sharedIndexKey(TOOLS)).toBe(await sharedIndexKey([...TOOLS]));

    const { share: kept, client } = await share('g:');
    await sharedToolRanker(kept)(REAL_TOOLS);
    await new Promise((r) => setTimeout(r, 200));
    expect(await client.keys('g:*')).toEqual([]);
  });

  it('the format is part of the key, the chunking is not', async () => {
    const tools = REAL_TOOLS.slice(0, 5);
    expect(await indexKey('one', tools, 2)).not.toBe(await indexKey('two', tools, 2));
    expect(await indexKey('one', tools, 2)).toBe(await indexKey('one', tools, 3));
  });
});
