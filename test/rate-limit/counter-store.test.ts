/**
 * The counter's arithmetic (a fixed window from the first request, refilled by `limit` at each
 * window's end, carrying up to `burst` unused), as the memory store runs it and as Redis's script
 * does: the same answers for the same takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../../src/redis/connection.js';
import { MemoryCounterStore, type CounterShape } from '../../src/rate-limit/counter-store.js';
import { RedisCounterStore } from '../../src/rate-limit/redis-counter-store.js';
import { startRedis, type RedisServer } from '../support/redis.js';

let now = 1_000_000;
const clock = () => now;

describe('MemoryCounterStore', () => {
  it('burst 0: exactly limit per window, the wait is the window end', async () => {
    const store = new MemoryCounterStore(clock);
    const shape = { limit: 3, windowMs: 1000, burst: 0 };
    expect([1, 2, 3].map(() => store.take('k', shape))).toEqual([0, 0, 0]);
    now += 400;
    expect(store.take('k', shape)).toBe(600);
    now += 600;
    expect([1, 2, 3, 4].map(() => store.take('k', shape))).toEqual([0, 0, 0, 1000]);
    // Unused windows carry nothing over without burst.
    now += 5000;
    expect([1, 2, 3, 4].map(() => store.take('k', shape))[3]).toBeGreaterThan(0);
    await store.close();
  });

  it('burst: unused admissions carry over, up to burst', async () => {
    const store = new MemoryCounterStore(clock);
    const shape = { limit: 2, windowMs: 1000, burst: 3 };
    const takes = (n: number) => Array.from({ length: n }, () => store.take('b', shape));
    expect(takes(6)).toEqual([0, 0, 0, 0, 0, 1000]); // fresh: limit + burst
    now += 1000;
    expect(takes(3).filter((w) => w === 0)).toHaveLength(2); // one window's refill
    now += 10_000;
    expect(takes(6).filter((w) => w === 0)).toHaveLength(5); // full again, no more
    await store.close();
  });

  it('a lower limit (reload) applies to the count at once, and waits out the windows it needs', async () => {
    const store = new MemoryCounterStore(clock);
    for (let i = 0; i < 10; i++) store.take('l', { limit: 10, windowMs: 1000, burst: 0 });
    // 10 used, now 2 per window: free again once 9 are refilled, in the fifth window.
    expect(store.take('l', { limit: 2, windowMs: 1000, burst: 0 })).toBe(5000);
    await store.close();
  });

  it('keeps counters apart by key', async () => {
    const store = new MemoryCounterStore(clock);
    const shape = { limit: 1, windowMs: 1000, burst: 0 };
    expect([store.take('a', shape), store.take('b', shape), store.take('a', shape)]).toEqual([0, 0, 1000]);
    await store.close();
  });
});

describe('RedisCounterStore', () => {
  let redis: RedisServer;
  let client: RedisClient;
  let store: RedisCounterStore;

  beforeAll(async () => {
    redis = await startRedis();
    client = connectRedis({ target: { url: redis.url }, name: 'rate-test' });
    // Made before the connection is ready: its first takes wait for it.
    store = new RedisCounterStore(client, 'test:', 1000);
  });

  afterAll(async () => {
    await store?.close();
    await redis?.stop();
  });

  it('answers as the memory store does: limit + burst fresh, then the wait to the window end', async () => {
    const shape: CounterShape = { limit: 2, windowMs: 5000, burst: 1 };
    const waits = [];
    for (let i = 0; i < 4; i++) waits.push(await store.take('x', shape));
    expect(waits.slice(0, 3)).toEqual([0, 0, 0]);
    expect(waits[3]).toBeGreaterThan(4000);
    expect(waits[3]).toBeLessThanOrEqual(5000);
    const ttl = Number((await redis.command('PTTL', 'test:ratelimit:x')).slice(1));
    // 3 used, 2 refilled per window: nothing used after two windows.
    expect(ttl).toBeGreaterThan(9000);
    expect(ttl).toBeLessThanOrEqual(10000);
  });

  it('rolls over: after the window, limit more', async () => {
    const shape: CounterShape = { limit: 2, windowMs: 1000, burst: 0 };
    expect([await store.take('y', shape), await store.take('y', shape)]).toEqual([0, 0]);
    const wait = await store.take('y', shape);
    expect(wait).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, wait + 20));
    expect(await store.take('y', shape)).toBe(0);
  });
});
