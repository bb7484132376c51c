/**
 * Three gateway replicas sharing one real redis-server (started by this file on a free loopback
 * port), no affinity: the round-robin SDK flow of round-robin-flow.ts.
 */
import { startRedis } from '../support/redis.js';
import { roundRobinFlow } from './round-robin-flow.js';

roundRobinFlow('one Redis node', async () => {
  const redis = await startRedis();
  return { sessions: { redisUrl: redis.url }, stop: () => redis.stop() };
});
