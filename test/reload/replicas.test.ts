/**
 * Three gateway processes on one Redis, each with its own config file (as each pod of a
 * Deployment mounts the ConfigMap): when every file changes, every replica reloads its own, and
 * the session whose GET stream each replica holds hears list_changed there, keeps its id, and
 * uses the new tools through any replica. A broken file on one replica changes nothing there,
 * and nothing anywhere else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, toolText } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { LogLines, configFile, reloadCount } from '../support/reload.js';
import { everything, watchingClient, type WatchingClient } from '../support/reload-clients.js';
import { until } from '../support/wait.js';

const SLOW = 'trigger-long-running-operation';

let redis: RedisServer;
const files: Array<ReturnType<typeof configFile>> = [];
const replicas: GatewayProcess[] = [];
const logs: LogLines[] = [];
const clients: WatchingClient[] = [];

const config = (tools: string[]) => ({
  reload: { debounceMs: 100 },
  sessions: { store: 'redis', redisUrl: redis.url, ttlSeconds: 600 },
  upstreams: [everything('everything', tools)],
});

beforeAll(async () => {
  redis = await startRedis();
  for (let i = 0; i < 3; i++) {
    const file = configFile(config(['echo', SLOW]));
    files.push(file);
    const gw = await spawnGateway({}, { configFile: file.file });
    replicas.push(gw);
    logs.push(new LogLines(gw.child));
  }
  // One session per replica, each holding its GET stream there.
  for (const gw of replicas) clients.push(await watchingClient(gw.url));
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.client.close().catch(() => undefined)));
  await Promise.all(replicas.map((r) => r.stop()));
  for (const f of files) f.remove();
  await redis?.stop();
});

describe('reload across 3 replicas on Redis', () => {
  it('each replica reloads its own file: every session hears list_changed, keeps its id, and the new tool works on any replica', async () => {
    const ids = clients.map((c) => c.transport.sessionId);
    let settled = false;
    const slow = clients[0]!.client.callTool(
      { name: `everything__${SLOW}`, arguments: { duration: 15, steps: 15 } },
      undefined,
      { timeout: 30_000 },
    );
    void slow.finally(() => (settled = true)).catch(() => undefined);
    const marks = logs.map((l) => l.lines.length);
    for (const f of files) f.write(config(['echo', SLOW, 'get-sum']));
    await Promise.all(logs.map((l, i) => l.waitFor('config reloaded', marks[i])));
    for (const [i, c] of clients.entries()) {
      await until(`list_changed for the session on replica ${i}`, () =>
        c.changes.includes('notifications/tools/list_changed'),
      );
      expect(c.transport.sessionId).toBe(ids[i]);
    }
    for (const [i, c] of clients.entries()) {
      expect((await c.client.listTools()).tools.map((t) => t.name)).toContain('everything__get-sum');
      const sum = await c.client.callTool({ name: 'everything__get-sum', arguments: { a: i, b: 10 } });
      expect(toolText(sum)).toContain(String(i + 10));
    }
    // The session of replica 0's client, through replica 2 (sessions are in Redis): the same new catalog.
    const headers = {
      'mcp-session-id': ids[0]!,
      'mcp-protocol-version': clients[0]!.transport.protocolVersion ?? '2025-11-25',
    };
    const roaming = await post(
      replicas[2]!.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'everything__get-sum', arguments: { a: 1, b: 1 } },
      },
      headers,
    );
    expect(roaming.status).toBe(200);
    expect(roaming.text).toContain('The sum of 1 and 1 is 2');
    expect(settled).toBe(false);
    expect(toolText(await slow)).toContain('Long running operation completed');
    for (const r of replicas) expect(await reloadCount(r.url, 'ok')).toBe(1);
  });

  it('a broken file on one replica is rejected there and changes nothing anywhere', async () => {
    const before = await Promise.all(clients.map(async (c) => (await c.client.listTools()).tools.map((t) => t.name)));
    const seen = clients.map((c) => c.changes.length);
    files[1]!.write('upstreams: {{ broken');
    await until(
      'replica 1 to count the rejection',
      async () => (await reloadCount(replicas[1]!.url, 'rejected')) === 1,
    );
    expect(await reloadCount(replicas[0]!.url, 'rejected')).toBe(0);
    expect(await reloadCount(replicas[2]!.url, 'rejected')).toBe(0);
    for (const [i, c] of clients.entries()) {
      expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(before[i]);
      expect(
        toolText(await c.client.callTool({ name: 'everything__echo', arguments: { message: `replica ${i}` } })),
      ).toContain(`replica ${i}`);
      expect(c.changes.length).toBe(seen[i]);
    }
  });
});
