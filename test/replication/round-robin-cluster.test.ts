/**
 * Three gateway replicas sharing a real 3-master Redis Cluster (built by this file on loopback:
 * `redis-server --cluster-enabled yes` ×3, `redis-cli --cluster create`), no affinity: the
 * round-robin SDK flow of round-robin-flow.ts. Sessions, events, owner records and the bus all
 * go through the Cluster.
 */
import { startRedisCluster } from '../support/redis-cluster.js';
import { roundRobinFlow } from './round-robin-flow.js';

roundRobinFlow('a 3-master Redis Cluster', async () => {
  const cluster = await startRedisCluster();
  return { sessions: { redis: { cluster: cluster.addresses } }, stop: () => cluster.stop() };
});
