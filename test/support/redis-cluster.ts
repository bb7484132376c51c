/**
 * A real 3-master Redis Cluster on loopback, built by the test itself: three
 * `redis-server --cluster-enabled yes` on free ports joined by `redis-cli --cluster create`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startRedis, type RedisServer } from './redis.js';

const run = promisify(execFile);

export interface RedisCluster {
  readonly nodes: RedisServer[];
  /** host:port of every master, as the gateway's `sessions.redis.cluster` takes them. */
  readonly addresses: string[];
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-cluster-'));
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      nodes.push(
        await startRedis({
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${i}.conf`), '--dir', dir, '--cluster-node-timeout', '2000'],
        }),
      );
    }
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], { timeout: 30_000 });
    const deadline = Date.now() + 20_000;
    for (const node of nodes) {
      while (!(await node.command('CLUSTER', 'INFO')).includes('cluster_state:ok')) {
        if (Date.now() > deadline) throw new Error('Redis Cluster did not reach cluster_state:ok');
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
