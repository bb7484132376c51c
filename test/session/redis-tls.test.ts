/**
 * Sessions in a Redis that speaks only TLS and wants a client certificate (rediss://, as managed
 * Redis offerings run): a real redis-server with a throwaway CA, the gateway with sessions.tls,
 * and what a missing client certificate must show: no start, and the reason in the log. Then
 * the same for a 3-master Redis Cluster whose bus and client ports speak TLS, and for a master
 * found through a Sentinel that speaks TLS to it and to the gateway.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { makeCertificates, type TestCertificates } from '../support/certificates.js';
import { ECHO_SERVER, exampleConfig, openSession, post, startGateway, stdioUpstream } from '../support/gateway.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { startRedisSentinel, type RedisSentinelSetup } from '../support/redis-sentinel.js';
import { freePort, startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

let certs: TestCertificates;
let redis: RedisServer;
let tlsPort: number;

beforeAll(async () => {
  certs = makeCertificates();
  tlsPort = await freePort();
  // The plain port is the test's own way in (to look at keys); the gateway gets only the TLS one.
  redis = await startRedis({
    args: [
      '--tls-port',
      String(tlsPort),
      '--tls-cert-file',
      certs.file('server.pem'),
      '--tls-key-file',
      certs.file('server.key'),
      '--tls-ca-cert-file',
      certs.file('ca.pem'),
      '--tls-auth-clients',
      'yes',
    ],
  });
});

afterAll(async () => {
  await redis?.stop();
  certs?.remove();
});

const sessions = (tls: Record<string, string>) => ({
  store: 'redis',
  redisUrl: `rediss://127.0.0.1:${tlsPort}`,
  tls: Object.fromEntries(Object.entries(tls).map(([k, v]) => [k, certs.file(v)])),
});

describe('Redis over TLS', () => {
  it('with the CA and a client certificate: sessions live in Redis and calls work', async () => {
    const gw = await startGateway(
      exampleConfig({
        sessions: sessions({ caFile: 'ca.pem', certFile: 'client.pem', keyFile: 'client.key' }),
        upstreams: [stdioUpstream('echo', ECHO_SERVER)],
      }),
    );
    try {
      await until(
        '/readyz 200 (connected over TLS)',
        async () => (await fetch(new URL('/readyz', gw.base))).status === 200,
      );
      const sid = await openSession(gw.url);
      expect(await redis.command('EXISTS', `mcpgw:{${sid}}:session`)).toMatch(/1/);
      const r = await post(
        gw.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'echo__echo', arguments: { text: 'over TLS' } },
        },
        { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      );
      expect(r.json.result.content[0].text).toBe('over TLS');
    } finally {
      await gw.stop();
    }
  });

  it('without a client certificate: the gateway does not start, and says why in a warning', async () => {
    const lines: string[] = [];
    const config = exampleConfig({
      logLevel: 'warn',
      sessions: sessions({ caFile: 'ca.pem' }),
      upstreams: [stdioUpstream('echo', ECHO_SERVER)],
    });
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    await expect(buildApp(config, { logger: log, defaultMetrics: false })).rejects.toThrow();
    // The reason, not only "retries exhausted": the server asked for a certificate.
    expect(lines.some((l) => /Redis connection error/.test(l) && /certificate required/.test(l))).toBe(true);
  }, 30_000);

  it('config: tls with a redis:// URL, or an unreadable file, is a start-up error naming the key', () => {
    expect(() =>
      exampleConfig({
        sessions: { store: 'redis', redisUrl: 'redis://127.0.0.1:6379', tls: { caFile: certs.file('ca.pem') } },
      }),
    ).toThrow(/sessions\.tls: needs a rediss:\/\/ URL/);
    expect(() =>
      exampleConfig({
        sessions: { store: 'redis', redisUrl: 'rediss://127.0.0.1:6379', tls: { caFile: certs.file('nope.pem') } },
      }),
    ).toThrow(/sessions\.tls\.caFile: cannot read/);
  });
});

describe('Redis Cluster over TLS', () => {
  let cluster: RedisCluster;

  beforeAll(async () => {
    cluster = await startRedisCluster({
      tls: { certFile: certs.file('server.pem'), keyFile: certs.file('server.key'), caFile: certs.file('ca.pem') },
    });
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const clusterSessions = (tls: Record<string, string>) => ({
    store: 'redis',
    redis: { cluster: cluster.addresses },
    tls: Object.fromEntries(Object.entries(tls).map(([k, v]) => [k, certs.file(v)])),
  });

  it('with the CA and a client certificate: sessions spread over every master, calls work, /readyz sees the cluster ok', async () => {
    const gw = await startGateway(
      exampleConfig({
        sessions: clusterSessions({ caFile: 'ca.pem', certFile: 'client.pem', keyFile: 'client.key' }),
        upstreams: [stdioUpstream('echo', ECHO_SERVER)],
      }),
    );
    try {
      await until('/readyz 200 with the cluster ok', async () => {
        const res = await fetch(new URL('/readyz', gw.base));
        const body = (await res.json()) as { store?: { cluster?: { state: string } } };
        return res.status === 200 && body.store?.cluster?.state === 'ok';
      });
      const holders = new Set<number>();
      for (let i = 0; i < 12; i++) {
        const sid = await openSession(gw.url);
        for (const node of cluster.nodes)
          if ((await node.command('EXISTS', `mcpgw:{${sid}}:session`)).startsWith(':1')) holders.add(node.port);
        const r = await post(
          gw.url,
          {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'echo__echo', arguments: { text: `tls ${i}` } },
          },
          { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        );
        expect(r.json.result.content[0].text).toBe(`tls ${i}`);
      }
      // 12 sessions on 3 masters: all on one would mean the client never followed the slot map.
      expect(holders.size).toBeGreaterThan(1);
    } finally {
      await gw.stop();
    }
  }, 30_000);

  it('without a client certificate: the gateway does not start, and says why in a warning', async () => {
    const lines: string[] = [];
    const config = exampleConfig({
      logLevel: 'warn',
      sessions: clusterSessions({ caFile: 'ca.pem' }),
      upstreams: [stdioUpstream('echo', ECHO_SERVER)],
    });
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    // A Cluster client reports only "Connection is closed.": the start-up error asks a seed node why.
    await expect(buildApp(config, { logger: log, defaultMetrics: false })).rejects.toThrow(
      /not reachable within 15 s of start: 127\.0\.0\.1:\d+: .*certificate required/,
    );
    expect(lines.some((l) => /Redis connection error/.test(l))).toBe(true);
  }, 30_000);
});

describe('Redis Sentinel over TLS', () => {
  let setup: RedisSentinelSetup;

  beforeAll(async () => {
    setup = await startRedisSentinel({
      tls: { certFile: certs.file('server.pem'), keyFile: certs.file('server.key'), caFile: certs.file('ca.pem') },
    });
  }, 30_000);

  afterAll(async () => {
    await setup?.stop();
  });

  it('with the CA and a client certificate: the sentinel and the master it names are reached over TLS, sessions live there', async () => {
    const gw = await startGateway(
      exampleConfig({
        sessions: {
          store: 'redis',
          redis: { sentinels: setup.sentinels, name: setup.name },
          tls: { caFile: certs.file('ca.pem'), certFile: certs.file('client.pem'), keyFile: certs.file('client.key') },
        },
        upstreams: [stdioUpstream('echo', ECHO_SERVER)],
      }),
    );
    try {
      await until(
        '/readyz 200 (sentinel and master over TLS)',
        async () => (await fetch(new URL('/readyz', gw.base))).status === 200,
      );
      const sid = await openSession(gw.url);
      expect(await setup.master.command('EXISTS', `mcpgw:{${sid}}:session`)).toMatch(/1/);
      const r = await post(
        gw.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'echo__echo', arguments: { text: 'via sentinel' } },
        },
        { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      );
      expect(r.json.result.content[0].text).toBe('via sentinel');
      // The sentinel names the master's TLS port: the gateway could not have used the plain one.
      expect(await setup.masterPort()).not.toBe(setup.master.port);
    } finally {
      await gw.stop();
    }
  }, 30_000);
});
