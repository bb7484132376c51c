/**
 * A real Redis Cluster on loopback, built by the test itself: `redis-server --cluster-enabled yes`
 * on free ports joined by `redis-cli --cluster create` (3 masters by default, optionally a
 * replica for each). cluster-node-timeout is 2 s, so failures are declared fast.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startRedis, type RedisServer } from './redis.js';

const run = promisify(execFile);

export interface RedisCluster {
  /** Masters first (in the order of `addresses`), then replicas, as created. */
  readonly nodes: RedisServer[];
  /** host:port of every master, as the gateway's `sessions.redis.cluster` takes them. */
  readonly addresses: string[];
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3, replicasPerMaster = 0): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-cluster-'));
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < masters * (1 + replicasPerMaster); i++) {
      nodes.push(
        await startRedis({
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${i}.conf`), '--dir', dir, '--cluster-node-timeout', '2000'],
        }),
      );
    }
    const all = nodes.map((n) => `127.0.0.1:${n.port}`);
    // redis-cli makes the first `masters` nodes masters and the rest their replicas.
    await run('redis-cli', ['--cluster', 'create', ...all, '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'], { timeout: 30_000 });
    const addresses = all.slice(0, masters);
    const deadline = Date.now() + 20_000;
    for (const node of nodes) {
      while (!(await node.command('CLUSTER', 'INFO')).includes('cluster_state:ok')) {
        if (Date.now() > deadline) throw new Error('Redis Cluster did not reach cluster_state:ok');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    // A replica can take over only once it has synced with its master.
    for (const node of nodes.slice(masters)) {
      while (!(await node.command('INFO', 'replication')).includes('master_link_status:up')) {
        if (Date.now() > deadline) throw new Error('a Redis Cluster replica did not sync with its master');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return {
      nodes,
      addresses,
      stop: async () => {
        await Promise.all(nodes.map((n) => n.stop()));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
