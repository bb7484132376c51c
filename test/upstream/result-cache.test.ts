/**
 * ResultCache on its own: bounded in bytes (least recently used out first), ttlMs bounded by
 * maxTtlMs and refused when negative or not a number, private results only with a principal,
 * an input_required result never kept, list changes and resource updates dropping what they name.
 */
import { describe, expect, it } from 'vitest';
import { DataPathEvents, subscribe } from '../../src/observability/events.js';
import { ResultCache, keepFor, resultCacheOf } from '../../src/upstream/result-cache.js';

const list = (n: number, extra: Record<string, unknown> = {}) => ({
  tools: [{ name: `t${n}`, description: 'x'.repeat(200) }],
  ttlMs: 60_000,
  cacheScope: 'public',
  ...extra,
});

describe('ResultCache', () => {
  it('evicts the least recently used entries to stay within maxBytes', () => {
    const one = JSON.stringify(list(1)).length;
    const cache = new ResultCache({ maxBytes: one * 3, maxTtlMs: 60_000 });
    for (const n of [1, 2, 3]) cache.set('u', 'tools/list', { cursor: String(n) }, undefined, list(n));
    expect(cache.size).toBe(3);
    // 1 used now: 2 is the least recently used when 4 comes.
    expect(cache.get('u', 'tools/list', { cursor: '1' }, undefined)).toBeDefined();
    cache.set('u', 'tools/list', { cursor: '4' }, undefined, list(4));
    expect(cache.bytes).toBeLessThanOrEqual(one * 3);
    expect(cache.get('u', 'tools/list', { cursor: '2' }, undefined)).toBeUndefined();
    for (const n of ['1', '3', '4']) expect(cache.get('u', 'tools/list', { cursor: n }, undefined)).toBeDefined();
    // Larger than the whole cache: not kept, nothing evicted for it.
    cache.set('u', 'tools/list', { cursor: '5' }, undefined, { ...list(5), big: 'y'.repeat(one * 4) });
    expect(cache.size).toBe(3);
  });

  it('bounds ttlMs by maxTtlMs and keeps nothing for a negative, zero or non-numeric one', () => {
    expect(keepFor({ ttlMs: 5 * 3600_000 }, 1000)).toBe(1000);
    expect(keepFor({ ttlMs: 200 }, 1000)).toBe(200);
    for (const ttlMs of [-1, 0, '100', null, undefined, Number.NaN, Number.POSITIVE_INFINITY])
      expect(keepFor({ ttlMs }, 1000)).toBe(0);
  });

  it('keeps a private (or unscoped) result per principal, and not at all without one', () => {
    const cache = new ResultCache({ maxBytes: 1 << 20, maxTtlMs: 60_000 });
    const read = { contents: [{ uri: 'a://1', text: 'mine' }], ttlMs: 60_000, cacheScope: 'private' };
    cache.set('u', 'resources/read', { uri: 'a://1' }, undefined, read);
    expect(cache.size).toBe(0);
    cache.set('u', 'resources/read', { uri: 'a://1' }, 'alice', read);
    expect(cache.get('u', 'resources/read', { uri: 'a://1' }, 'alice')).toMatchObject({ contents: read.contents });
    expect(cache.get('u', 'resources/read', { uri: 'a://1' }, 'bob')).toBeUndefined();
    expect(cache.get('u', 'resources/read', { uri: 'a://1' }, undefined)).toBeUndefined();
    const { cacheScope: _scope, ...unscoped } = read;
    cache.set('u', 'resources/read', { uri: 'a://2' }, 'alice', unscoped);
    expect(cache.get('u', 'resources/read', { uri: 'a://2' }, 'bob')).toBeUndefined();
  });

  it('keys by params and client capabilities, not by the rest of _meta; hands out copies', () => {
    const cache = new ResultCache({ maxBytes: 1 << 20, maxTtlMs: 60_000 });
    const meta = (caps: object, name: string) => ({
      _meta: { 'io.modelcontextprotocol/clientCapabilities': caps, 'io.modelcontextprotocol/clientInfo': { name } },
    });
    cache.set('u', 'tools/list', meta({}, 'one'), undefined, list(1));
    const hit = cache.get('u', 'tools/list', meta({}, 'two'), undefined);
    expect(hit).toMatchObject({ tools: [{ name: 't1' }], cacheScope: 'public' });
    expect(cache.get('u', 'tools/list', meta({ sampling: {} }, 'one'), undefined)).toBeUndefined();
    (hit!.tools as unknown[]).length = 0;
    expect(cache.get('u', 'tools/list', meta({}, 'one'), undefined)!.tools).toHaveLength(1);
  });

  it('never keeps an input_required result, or a method that is not cacheable by its hints', () => {
    const cache = new ResultCache({ maxBytes: 1 << 20, maxTtlMs: 60_000 });
    cache.set('u', 'resources/read', { uri: 'a://1' }, 'alice', { resultType: 'input_required', ttlMs: 60_000 });
    expect(cache.size).toBe(0);
  });

  it('drops the list a list_changed names and the URI a resources/updated names, of that upstream only', () => {
    const cache = new ResultCache({ maxBytes: 1 << 20, maxTtlMs: 60_000 });
    const read = (uri: string) => ({ contents: [{ uri, text: uri }], ttlMs: 60_000, cacheScope: 'public' });
    for (const u of ['u', 'v']) {
      cache.set(u, 'tools/list', undefined, undefined, list(1));
      cache.set(u, 'prompts/list', undefined, undefined, { prompts: [], ttlMs: 60_000, cacheScope: 'public' });
      cache.set(u, 'resources/read', { uri: 'a://1' }, undefined, read('a://1'));
      cache.set(u, 'resources/read', { uri: 'a://2' }, undefined, read('a://2'));
    }
    cache.notified('u', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    cache.notified('u', { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'a://1' } });
    expect(cache.get('u', 'tools/list', undefined, undefined)).toBeUndefined();
    expect(cache.get('u', 'prompts/list', undefined, undefined)).toBeDefined();
    expect(cache.get('u', 'resources/read', { uri: 'a://1' }, undefined)).toBeUndefined();
    expect(cache.get('u', 'resources/read', { uri: 'a://2' }, undefined)).toBeDefined();
    expect(cache.get('v', 'tools/list', undefined, undefined)).toBeDefined();
    expect(cache.get('v', 'resources/read', { uri: 'a://1' }, undefined)).toBeDefined();
  });

  it('keeps each owner (one set of an upstream) apart, and labels its metrics by the upstream', () => {
    const cache = new ResultCache({ maxBytes: 1 << 20, maxTtlMs: 60_000 });
    const old = cache.owner('u');
    const next = cache.owner('u');
    cache.set(old, 'tools/list', undefined, undefined, list(1));
    expect(cache.get(next, 'tools/list', undefined, undefined)).toBeUndefined();
    cache.set(next, 'tools/list', undefined, undefined, list(2));
    cache.drop(old);
    expect(cache.get(next, 'tools/list', undefined, undefined)).toMatchObject({ tools: [{ name: 't2' }] });
  });

  it('tells the data path of each lookup and eviction, by upstream name', () => {
    const diagnostics = new DataPathEvents('result-cache-test');
    const seen: string[] = [];
    const undo = subscribe(diagnostics.gateway, {
      'cache:lookup': (e) => seen.push(`${e.outcome} ${e.upstream} ${e.method}`),
      'cache:eviction': (e) => seen.push(`evicted ${e.upstream}`),
    });
    try {
      const one = JSON.stringify(list(1)).length;
      const cache = new ResultCache({ maxBytes: one, maxTtlMs: 60_000, diagnostics });
      const u = cache.owner('u');
      const v = cache.owner('v');
      cache.get(u, 'tools/list', undefined, undefined);
      cache.set(u, 'tools/list', undefined, undefined, list(1));
      cache.get(u, 'tools/list', undefined, undefined);
      cache.set(v, 'tools/list', undefined, undefined, list(2));
      expect(seen).toEqual(['miss u tools/list', 'hit u tools/list', 'evicted u']);
    } finally {
      undo();
    }
  });

  it('is off when cache.enabled is false or it has no room', () => {
    expect(resultCacheOf({ cache: { enabled: false, maxBytes: 1000, maxTtlMs: 1000 } }, undefined)).toBeUndefined();
    expect(resultCacheOf({ cache: { enabled: true, maxBytes: 0, maxTtlMs: 1000 } }, undefined)).toBeUndefined();
    expect(resultCacheOf({ cache: { enabled: true, maxBytes: 1000, maxTtlMs: 1000 } }, undefined)).toBeDefined();
  });
});
