/**
 * The token store: sealed records (AES-256-GCM) keyed and bound by (principal, upstream), in
 * memory and in a real redis-server. What must hold: Redis holds only ciphertext, old records
 * stay readable after a key is appended, and no principal reads another's record, not even
 * one copied under its own key.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { MemoryTokenStore } from '../../src/session/memory-token-store.js';
import { RedisTokenStore } from '../../src/session/redis-token-store.js';
import { TokenCipher } from '../../src/session/token-store.js';
import { ECHO_SERVER, stdioUpstream } from '../support/gateway.js';
import { startRedis, type RedisServer } from '../support/redis.js';

const ALICE = 'https://issuer.test alice';
const BOB = 'https://issuer.test bob';
const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };
const token = (accessToken: string) => ({
  accessToken,
  expiresAt: Date.now() + 60_000,
  refreshToken: `refresh-${accessToken}`,
});

let redis: RedisServer;
let client: Redis;

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

describe('redis token store', () => {
  it('holds only ciphertext: neither the token, the refresh token nor the principal appear in Redis', async () => {
    const store = new RedisTokenStore(client.duplicate(), new TokenCipher([k1]), 'it1:');
    await store.put(ALICE, 'crm', token('alice-secret-token'));
    const keys = await client.keys('it1:*');
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain('alice');
    const raw = (await client.get(keys[0]!))!;
    expect(raw).toMatch(/^v1\.k1\./);
    expect(raw).not.toContain('alice');
    expect(raw).not.toContain('secret');
    expect(Buffer.from(raw.split('.')[3]!, 'base64url').toString('latin1')).not.toContain('alice-secret-token');
    expect(await client.pttl(keys[0]!)).toBeGreaterThan(50_000);
    expect((await store.get(ALICE, 'crm'))?.accessToken).toBe('alice-secret-token');
    await store.close();
  });

  it('rotation: records sealed with an older key stay readable once a new key is appended; new ones use the new key', async () => {
    const before = new RedisTokenStore(client.duplicate(), new TokenCipher([k1]), 'it2:');
    await before.put(ALICE, 'crm', token('old-one'));
    const after = new RedisTokenStore(client.duplicate(), new TokenCipher([k1, k2]), 'it2:');
    expect((await after.get(ALICE, 'crm'))?.accessToken).toBe('old-one');
    await after.put(BOB, 'crm', token('new-one'));
    const sealed = await Promise.all((await client.keys('it2:*')).map((k) => client.get(k)));
    expect(sealed.map((s) => s!.split('.')[1]).sort()).toEqual(['k1', 'k2']);
    // The old key dropped: what it sealed is unreadable (not an error, not garbage).
    const withoutOld = new RedisTokenStore(client.duplicate(), new TokenCipher([k2]), 'it2:');
    expect(await withoutOld.get(ALICE, 'crm')).toBeUndefined();
    expect((await withoutOld.get(BOB, 'crm'))?.accessToken).toBe('new-one');
    await Promise.all([before.close(), after.close(), withoutOld.close()]);
  });

  it("another principal cannot read a user's token, not even by copying the record under its own key", async () => {
    const store = new RedisTokenStore(client.duplicate(), new TokenCipher([k1]), 'it3:');
    await store.put(ALICE, 'crm', token('alice-only'));
    expect(await store.get(BOB, 'crm')).toBeUndefined();
    expect(await store.get(ALICE, 'other-upstream')).toBeUndefined();
    // Bob writes a record of his own, then the attacker overwrites it with Alice's sealed bytes.
    await store.put(BOB, 'crm', token('bob-own'));
    const keys = await client.keys('it3:*');
    const values = await Promise.all(keys.map((k) => client.get(k)));
    const aliceKey =
      keys[values.findIndex((v) => v !== null && new TokenCipher([k1]).open(v, ALICE, 'crm') !== undefined)]!;
    const bobKey = keys.find((k) => k !== aliceKey)!;
    await client.set(bobKey, (await client.get(aliceKey))!);
    expect(await store.get(BOB, 'crm')).toBeUndefined();
    expect((await store.get(ALICE, 'crm'))?.accessToken).toBe('alice-only');
    // A tampered record does not open either.
    const sealed = (await client.get(aliceKey))!;
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] = body[0]! ^ 1;
    parts[3] = body.toString('base64url');
    await client.set(aliceKey, parts.join('.'));
    expect(await store.get(ALICE, 'crm')).toBeUndefined();
    await store.delete(ALICE, 'crm');
    expect(await client.exists(aliceKey)).toBe(0);
    await store.close();
  });
});

describe('memory token store', () => {
  it('seals too, expires records, and bounds how many it holds', async () => {
    const store = new MemoryTokenStore(new TokenCipher([]), 2);
    await store.put(ALICE, 'crm', token('a'));
    expect(store.raw().join()).not.toContain('refresh-a');
    expect(await store.get(BOB, 'crm')).toBeUndefined();
    expect((await store.get(ALICE, 'crm'))?.accessToken).toBe('a');
    await store.put(ALICE, 'gone', { accessToken: 'x', expiresAt: Date.now() - 1 });
    expect(await store.get(ALICE, 'gone')).toBeUndefined();
    await store.put(BOB, 'crm', token('b'));
    await store.put(BOB, 'erp', token('c'));
    await store.put(BOB, 'hr', token('d'));
    expect(store.raw()).toHaveLength(2);
  });
});

describe('pending authorizations (grant authorization-code)', () => {
  const pending = (expiresAt = Date.now() + 60_000) => ({
    principal: ALICE,
    upstream: 'crm',
    verifier: 'verifier-secret-value',
    elicitationId: 'e1',
    expiresAt,
  });

  it('Redis holds them only sealed, under a digest of the state; a state is taken once (two takers: one gets it); a state moved to another key does not open', async () => {
    const store = new RedisTokenStore(client.duplicate(), new TokenCipher([k1]), 'pa1:');
    await store.putPending('state-one', pending());
    const keys = await client.keys('pa1:*');
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain('state-one');
    const raw = (await client.get(keys[0]!))!;
    expect(raw).toMatch(/^v1\.k1\./);
    for (const plain of ['alice', 'verifier-secret', 'crm']) expect(raw).not.toContain(plain);
    expect(await client.pttl(keys[0]!)).toBeGreaterThan(50_000);
    expect((await store.getPending('state-one'))?.verifier).toBe('verifier-secret-value');
    // A sealed record copied under another state's key: bound to its own state, it does not open.
    await store.putPending('state-two', pending());
    const two = (await client.keys('pa1:*')).find((k) => k !== keys[0])!;
    await client.set(two, raw);
    expect(await store.getPending('state-two')).toBeUndefined();
    const [a, b] = await Promise.all([store.takePending('state-one'), store.takePending('state-one')]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    expect(await store.getPending('state-one')).toBeUndefined();
    await store.close();
  });

  it('an expired one is gone, in memory as in Redis', async () => {
    const memory = new MemoryTokenStore(new TokenCipher([k1]));
    const redisStore = new RedisTokenStore(client.duplicate(), new TokenCipher([k1]), 'pa2:');
    for (const store of [memory, redisStore]) {
      await store.putPending('old', pending(Date.now() + 50));
      expect(await store.getPending('old')).toBeDefined();
      await new Promise((r) => setTimeout(r, 80));
      expect(await store.getPending('old')).toBeUndefined();
      expect(await store.takePending('old')).toBeUndefined();
    }
    await redisStore.close();
  });
});

describe('secrets config', () => {
  const upstreams = [stdioUpstream('echo', ECHO_SERVER)];
  it('keys come from ${VAR}; a key that is not 32 bytes of base64, a missing variable and a repeated id are named', () => {
    const good = randomBytes(32).toString('base64');
    const config = resolveConfig(
      { upstreams, secrets: { keys: [{ id: 'k1', key: '${TOKEN_KEY}' }] } },
      { TOKEN_KEY: good },
    );
    expect(config.secrets!.keys![0]!.key).toBe(good);
    expect(() =>
      resolveConfig(
        {
          upstreams,
          secrets: {
            keys: [
              { id: 'a', key: 'c2hvcnQ=' },
              { id: 'a', key: '${NOT_SET}' },
            ],
          },
        },
        {},
      ),
    ).toThrow(
      /secrets\.keys\[0\]\.key: must be 32 bytes[\s\S]*secrets\.keys\[1\]\.key: environment variable NOT_SET is not set[\s\S]*secrets\.keys\[1\]\.id: "a" is listed twice/,
    );
  });
});
