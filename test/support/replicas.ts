/**
 * N gateway replicas sharing one Redis (sessions, events, owner records and the bus), as a
 * load balancer without affinity would see them. In this process by default; pass
 * `spawnGateway` (gateway-process.ts) for replicas a test kills.
 */
import { exampleConfig, startGateway, type RunningGateway } from './gateway.js';

type ReplicaConfig = { sessions: Record<string, unknown> } & Record<string, unknown>;

interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Starts `count` replicas one after another with the same config, whose `sessions` (the keys
 * that point at the Redis: `redisUrl`, or `redis` for Sentinel or Cluster, and any other) get
 * `store: 'redis'`. If one fails to start, the ones already running are stopped.
 */
export function startReplicas(count: number, config: ReplicaConfig): Promise<RunningGateway[]>;
export function startReplicas<Replica extends Stoppable>(
  count: number,
  config: ReplicaConfig,
  start: (config: Record<string, unknown>) => Promise<Replica>,
): Promise<Replica[]>;
export async function startReplicas(
  count: number,
  config: ReplicaConfig,
  start: (config: Record<string, unknown>) => Promise<Stoppable> = (c) => startGateway(exampleConfig(c)),
): Promise<Stoppable[]> {
  const replicas: Stoppable[] = [];
  try {
    for (let i = 0; i < count; i++)
      replicas.push(await start({ ...config, sessions: { store: 'redis', ...config.sessions } }));
  } catch (err) {
    await Promise.all(replicas.map((r) => r.stop()));
    throw err;
  }
  return replicas;
}

/**
 * A fetch for an SDK client transport that sends each request to the next of `replicas` in
 * turn, whatever replica its URL names, counting in `hits` (by replica index) where each went.
 * Read at call time: replicas started after the fetch was made take part.
 */
export function roundRobinFetch(replicas: ReadonlyArray<{ url: URL }>, hits: number[] = []): typeof fetch {
  let next = 0;
  return (input, init) => {
    const i = next++ % replicas.length;
    hits[i] = (hits[i] ?? 0) + 1;
    const url = new URL(input instanceof Request ? input.url : String(input));
    url.host = replicas[i]!.url.host;
    return fetch(url, init);
  };
}
