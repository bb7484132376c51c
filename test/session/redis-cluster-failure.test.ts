/**
 * A gateway on a real Redis Cluster (built by this file on loopback) when a master dies.
 * Without replicas the cluster declares itself down: /readyz must say so (503, CLUSTERDOWN) and
 * calls must fail fast with a typed error, then all comes back when the master does. With
 * replicas the cluster fails over: sessions that lived on the dead master keep working.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import type { RedisServer } from '../support/redis.js';
import { exampleConfig, openSession, post, startGateway, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const KEY_PREFIX = 'fail:';
let cluster: RedisCluster | undefined;
let gw: RunningGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  await cluster?.stop();
  cluster = undefined;
});

async function gatewayOn(c: RedisCluster): Promise<RunningGateway> {
  // cacheMs 0: every request reads its session from Redis, so a dead master shows at once.
  return startGateway(
    exampleConfig({ sessions: { store: 'redis', keyPrefix: KEY_PREFIX, cacheMs: 0, redis: { cluster: c.addresses } } }),
  );
}

interface Readiness {
  status: number;
  store: { state: string; lastError?: string; cluster?: { state: string; failingMasters: string[] } };
}

async function readiness(g: RunningGateway): Promise<Readiness> {
  const res = await fetch(new URL('/readyz', g.base));
  const body = (await res.json()) as { store: Readiness['store'] };
  return { status: res.status, store: body.store };
}

async function metric(g: RunningGateway, name: string): Promise<number | undefined> {
  const text = await (await fetch(new URL('/metrics', g.base))).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

function call(g: RunningGateway, sid: string, text: string) {
  return post(
    g.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text } } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
}

async function isMaster(node: RedisServer): Promise<boolean> {
  return (await node.command('INFO', 'replication')).includes('role:master');
}

/** The master holding `key`: the one node that answers for it instead of redirecting. */
async function holderOf(c: RedisCluster, key: string): Promise<RedisServer> {
  for (const node of c.nodes) {
    if ((await isMaster(node)) && (await node.command('EXISTS', key)).startsWith(':1')) return node;
  }
  throw new Error(`no master holds ${key}`);
}

/** Sessions opened until some live on `victim`'s slots and some elsewhere. */
async function sessionsOnAndOff(
  g: RunningGateway,
  c: RedisCluster,
  victim: RedisServer,
): Promise<{ on: string[]; off: string[] }> {
  const on: string[] = [];
  const off: string[] = [];
  while (on.length < 2 || off.length < 2) {
    const sid = await openSession(g.url);
    ((await holderOf(c, `${KEY_PREFIX}{${sid}}:session`)) === victim ? on : off).push(sid);
  }
  return { on, off };
}

describe('a Redis Cluster master dies', () => {
  it('without replicas: /readyz names the master, then says CLUSTERDOWN with 503; calls fail fast and typed; all returns with the master', async () => {
    cluster = await startRedisCluster({ masters: 3 });
    gw = await gatewayOn(cluster);
    await until(
      'the gateway to see the cluster ok',
      async () => (await readiness(gw!)).store.cluster?.state === 'ok',
      10_000,
    );
    expect(await metric(gw, 'mcpgw_session_store_up')).toBe(1);
    expect(await metric(gw, 'mcpgw_session_store_failing_masters')).toBe(0);

    const victim = cluster.nodes[0]!;
    const victimAddress = cluster.addresses[0]!;
    const { on, off } = await sessionsOnAndOff(gw, cluster, victim);
    expect((await call(gw, off[0]!, 'before')).json.result.content[0].text).toBe('before');

    await victim.stop();
    // The cluster flags the master within cluster-node-timeout (2 s), then refuses every command.
    await until(
      'the dead master to be named',
      async () => (await readiness(gw!)).store.cluster?.failingMasters.includes(victimAddress) === true,
      15_000,
    );
    await until('/readyz to turn 503', async () => (await readiness(gw!)).status === 503, 15_000);
    const down = await readiness(gw);
    expect(down.store).toMatchObject({
      state: 'unavailable',
      lastError: 'CLUSTERDOWN',
      cluster: { state: 'fail', failingMasters: [victimAddress] },
    });
    expect(await metric(gw, 'mcpgw_session_store_up')).toBe(0);
    expect(await metric(gw, 'mcpgw_session_store_failing_masters')).toBe(1);

    // Sessions on the survivors cannot be read either (the cluster refuses): a typed error, fast.
    for (const sid of [on[0]!, off[0]!]) {
      const t = Date.now();
      const r = await call(gw, sid, 'during');
      expect(Date.now() - t).toBeLessThan(5000);
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe(-32010);
    }

    await victim.start(); // rejoins with its node id and slots (its nodes.conf survived), empty
    // The cluster says ok first; this replica's own connection to the master follows.
    await until(
      '/readyz to turn 200 with every master answering',
      async () => {
        const r = await readiness(gw!);
        return r.status === 200 && r.store.cluster?.state === 'ok' && r.store.cluster.failingMasters.length === 0;
      },
      20_000,
    );
    expect(await metric(gw, 'mcpgw_session_store_up')).toBe(1);
    await until(
      'a survivor session to be served again',
      async () => (await call(gw!, off[1]!, 'after')).json?.result?.content?.[0]?.text === 'after',
      10_000,
    );
    // Nothing was persisted on the dead master: its sessions are gone, as on any lost Redis. The
    // client's slot map may lag the cluster for a moment (a retryable 503 meanwhile, never a hang).
    const statuses: number[] = [];
    await until(
      "the dead master's session to be reported gone",
      async () => {
        const r = await call(gw!, on[1]!, 'lost');
        statuses.push(r.status);
        if (r.status === 503) expect(r.json.error.code).toBe(-32010);
        return r.status === 404;
      },
      10_000,
    );
    console.log(`after the master returned, a request for a session it had held answered: ${statuses.join(', ')}`);
  }, 90_000);

  it('with replicas: the cluster fails over and sessions of the dead master keep working', async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    gw = await gatewayOn(cluster);
    await until(
      'the gateway to see the cluster ok',
      async () => (await readiness(gw!)).store.cluster?.state === 'ok',
      10_000,
    );

    const victim = cluster.nodes[0]!;
    const { on, off } = await sessionsOnAndOff(gw, cluster, victim);
    // Replication is asynchronous: let the last session reach the replica before the kill.
    await new Promise((r) => setTimeout(r, 500));

    await victim.stop();
    await until(
      "a replica to take over the dead master's slots",
      async () => {
        for (const node of cluster!.nodes.filter((n) => n.running && n !== victim)) {
          if (
            (await isMaster(node)) &&
            (await node.command('EXISTS', `${KEY_PREFIX}{${on[0]}}:session`)).startsWith(':1')
          )
            return true;
        }
        return false;
      },
      20_000,
    );
    // The client learns the new slot map (a MOVED reply or its periodic refresh).
    await until(
      'a session of the dead master to be served by its successor',
      async () => (await call(gw!, on[0]!, 'moved')).json?.result?.content?.[0]?.text === 'moved',
      20_000,
    );
    for (const sid of [...on, ...off]) expect((await call(gw, sid, 'still')).json.result.content[0].text).toBe('still');
    await until(
      '/readyz to show a whole cluster again',
      async () => {
        const r = await readiness(gw!);
        return r.status === 200 && r.store.cluster?.state === 'ok' && r.store.cluster.failingMasters.length === 0;
      },
      15_000,
    );
  }, 90_000);
});
