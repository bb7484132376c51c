/**
 * A Redis Sentinel setup on loopback, built by the test itself: a master redis-server, optionally
 * a replica of it, and one `redis-server --sentinel` monitoring the master with quorum 1 (it
 * decides alone), from a sentinel.conf generated into a temporary directory (Sentinel rewrites
 * its config file, so it must be writable). All on free ports; stop() stops every process.
 *
 * With `tls` (no replica), the master and the sentinel also listen on TLS ports that want a client
 * certificate, the sentinel monitors the master over TLS, and `sentinels` names the TLS port;
 * `command` keeps a plain way in.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type RedisServer } from './redis.js';

export interface RedisSentinelSetup {
  readonly master: RedisServer;
  readonly replica: RedisServer | undefined;
  readonly sentinel: RedisServer;
  /** The master group name. */
  readonly name: string;
  /** As the gateway's `sessions.redis.sentinels` takes them. */
  readonly sentinels: Array<{ host: string; port: number }>;
  /** The port of the master as the sentinel names it now. */
  masterPort(): Promise<number>;
  /**
   * SENTINEL FAILOVER: resolves once the replica is the master the sentinel names and the old
   * master has been turned into its replica (Sentinel then disconnects the old master's clients).
   */
  failover(): Promise<RedisServer>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The values of a RESP array of bulk strings (enough for SENTINEL get-master-addr-by-name). */
function bulkStrings(reply: string): string[] {
  return reply.split('\r\n').filter((_, i) => i > 0 && i % 2 === 0);
}

export async function startRedisSentinel(
  options: { replica?: boolean; tls?: { certFile: string; keyFile: string; caFile: string } } = {},
): Promise<RedisSentinelSetup> {
  const { tls } = options;
  if (tls && options.replica) throw new Error('startRedisSentinel: tls with a replica is not built here');
  const tlsSettings = tls
    ? {
        'tls-cert-file': tls.certFile,
        'tls-key-file': tls.keyFile,
        'tls-ca-cert-file': tls.caFile,
        'tls-auth-clients': 'yes',
        'tls-replication': 'yes',
      }
    : {};
  const masterTlsPort = tls ? await freePort() : undefined;
  const sentinelTlsPort = tls ? await freePort() : undefined;
  const name = 'mymaster';
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-sentinel-'));
  const started: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // A replica writes the RDB of its full sync to `dir` (not the test's working directory); the
    // master sends it at once instead of waiting for more replicas to join the transfer.
    const args = (i: number) => ['--dir', mkdtempSync(join(dir, `node-${i}-`)), '--repl-diskless-sync-delay', '0'];
    const tlsArgs = (port: number | undefined) =>
      port === undefined
        ? []
        : ['--tls-port', String(port), ...Object.entries(tlsSettings).flatMap(([k, v]) => [`--${k}`, v])];
    const master = await startRedis({ args: [...args(0), ...tlsArgs(masterTlsPort)] });
    started.push(master);
    let replica: RedisServer | undefined;
    if (options.replica) {
      replica = await startRedis({ args: [...args(1), '--replicaof', '127.0.0.1', String(master.port)] });
      started.push(replica);
    }
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `sentinel monitor ${name} 127.0.0.1 ${masterTlsPort ?? master.port} 1`,
        ...(sentinelTlsPort === undefined
          ? []
          : [`tls-port ${sentinelTlsPort}`, ...Object.entries(tlsSettings).map(([k, v]) => `${k} ${v}`)]),
        // Failovers happen when a test asks for one (SENTINEL FAILOVER), not because a test
        // paused the master for a few seconds.
        `sentinel down-after-milliseconds ${name} 30000`,
        `sentinel failover-timeout ${name} 10000`,
        `dir ${dir}`,
        '',
      ].join('\n'),
    );
    const sentinel = await startRedis({ configFile: conf, args: ['--sentinel'] });
    started.push(sentinel);

    const masterPort = async () =>
      Number(bulkStrings(await sentinel.command('SENTINEL', 'get-master-addr-by-name', name))[1]);

    const failover = async () => {
      if (!replica) throw new Error('startRedisSentinel({ replica: true }) is needed for a failover');
      const target = replica;
      const deadline = Date.now() + 30_000;
      // The sentinel must have discovered the replica first (-NOGOODSLAVE until then).
      while (!(await sentinel.command('SENTINEL', 'FAILOVER', name)).startsWith('+OK')) {
        if (Date.now() > deadline) throw new Error('SENTINEL FAILOVER kept being refused');
        await sleep(200);
      }
      const role = async (server: RedisServer) => /role:(\w+)/.exec(await server.command('INFO', 'replication'))?.[1];
      while (
        (await masterPort()) !== target.port ||
        (await role(target)) !== 'master' ||
        (await role(master)) !== 'slave'
      ) {
        if (Date.now() > deadline) throw new Error('the failover did not complete within 30 s');
        await sleep(100);
      }
      return target;
    };

    return {
      master,
      replica,
      sentinel,
      name,
      sentinels: [{ host: '127.0.0.1', port: sentinelTlsPort ?? sentinel.port }],
      masterPort,
      failover,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
