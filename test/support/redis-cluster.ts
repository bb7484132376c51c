/**
 * A real Redis Cluster on loopback, built by the test itself: `redis-server --cluster-enabled yes`
 * on free ports joined by `redis-cli --cluster create` (3 masters by default, optionally a
 * replica for each). cluster-node-timeout is 2 s, so failures are declared fast.
 *
 * With `tls`, every node also listens on a TLS port that wants a client certificate, and the
 * cluster bus and replication speak TLS: `addresses` are then the TLS ports (Redis 7 announces
 * each client the ports of its own kind), while `nodes[i].command` keeps a plain way in.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, startRedis, type RedisServer } from './redis.js';

const run = promisify(execFile);

export interface RedisCluster {
  /** Masters first (in the order of `addresses`), then replicas, as created. */
  readonly nodes: RedisServer[];
  /** host:port of every master (TLS ports with `tls`), as the gateway's `sessions.redis.cluster` takes them. */
  readonly addresses: string[];
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** Server certificate, its key and the CA that signs clients' certificates. */
  tls?: { certFile: string; keyFile: string; caFile: string };
}

export async function startRedisCluster({
  masters = 3,
  replicasPerMaster = 0,
  tls,
}: RedisClusterOptions = {}): Promise<RedisCluster> {
  const tlsPorts: number[] = [];
  const tlsArgs = async (): Promise<string[]> => {
    if (!tls) return [];
    const port = await freePort();
    tlsPorts.push(port);
    return [
      '--tls-port',
      String(port),
      '--tls-cert-file',
      tls.certFile,
      '--tls-key-file',
      tls.keyFile,
      '--tls-ca-cert-file',
      tls.caFile,
      '--tls-auth-clients',
      'yes',
      '--tls-cluster',
      'yes',
      '--tls-replication',
      'yes',
    ];
  };
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-cluster-'));
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < masters * (1 + replicasPerMaster); i++) {
      // The bus port defaults to port + 10000, which does not exist above 55535: choose it too.
      const busPort = await freePort();
      nodes.push(
        await startRedis({
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-port',
            String(busPort),
            '--cluster-config-file',
            join(dir, `nodes-${i}.conf`),
            '--dir',
            dir,
            '--cluster-node-timeout',
            '2000',
            ...(await tlsArgs()),
          ],
        }),
      );
    }
    const all = (tls ? tlsPorts : nodes.map((n) => n.port)).map((port) => `127.0.0.1:${port}`);
    // The nodes meet over the bus of the kind they will use (TLS with tls-cluster).
    const cliTls = tls ? ['--tls', '--cacert', tls.caFile, '--cert', tls.certFile, '--key', tls.keyFile] : [];
    // redis-cli makes the first `masters` nodes masters and the rest their replicas.
    await run(
      'redis-cli',
      [...cliTls, '--cluster', 'create', ...all, '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'],
      { timeout: 30_000 },
    );
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
