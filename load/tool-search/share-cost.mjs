// What sharing a large tool search index through Redis costs a replica, as the gateway does it
// (tool-search/index-share.ts): the first build (and the keeping of the index in Redis) against
// a later replica's load of it, wall time and the longest event-loop hold of each, over 50,000
// tools of the same synthetic kind as quality.mjs's distractors. Needs `npm run build` first and
// a Redis on loopback (its keys are removed after).
//
//   node load/tool-search/share-cost.mjs [--redis redis://127.0.0.1:6379] [--tools 50000]
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { connectRedis } from '../../dist/redis/connection.js';
import { createLogger } from '../../dist/observability/logger.js';
import { searchable } from '../../dist/tool-search/ranker.js';
import { RedisIndexShare } from '../../dist/tool-search/redis-index-share.js';
import { sharedToolRanker } from '../../dist/tool-search/search-thread.js';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const url = option('--redis', 'redis://127.0.0.1:6379');
const n = Number(option('--tools', 50000));
if (!/^redis:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\/?$/.test(url)) throw new Error(`loopback Redis only: ${url}`);

let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = (a) => a[Math.floor(rand() * a.length)];
const verbs = ['get', 'list', 'create', 'update', 'delete', 'search', 'send', 'read', 'write', 'sync', 'export'];
const nouns = ['file', 'issue', 'message', 'channel', 'user', 'record', 'invoice', 'ticket', 'report', 'page'];
const areas = ['crm', 'billing', 'hr', 'wiki', 'calendar', 'storage', 'analytics', 'inventory', 'support', 'ads'];
const tools = Array.from({ length: n }, (_, i) => {
  const [v, o, a] = [pick(verbs), pick(nouns), pick(areas)];
  const upstream = `${a}${i % 97}`;
  return searchable(
    {
      name: `${upstream}__${v}_${o}`,
      description: `${v} a ${o} in the ${a} system. Returns the ${o} as JSON.`,
      inputSchema: { type: 'object', properties: { id: { type: 'string', description: `The ${o} id` } } },
    },
    upstream,
  );
});

const redis = connectRedis({ target: { url }, name: 'share-cost', commandTimeoutMs: 10_000 });
await new Promise((resolve) => redis.once('ready', resolve));
const prefix = `share-cost-${process.pid}:`;
const share = new RedisIndexShare(redis, prefix, createLogger('silent'));
try {
  for (const step of ['first replica (builds, keeps)', 'later replica (loads)']) {
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const t0 = performance.now();
    const ranker = await sharedToolRanker(share)(tools);
    const ms = performance.now() - t0;
    delay.disable();
    console.log(
      `${n} tools, ${step}: ${ranker.origin} in ${ms.toFixed(0)} ms, ` +
        `longest event-loop hold ${(delay.max / 1e6).toFixed(0)} ms`,
    );
    // The index is kept after the first ranker is handed out: wait for it before the next step.
    for (let i = 0; i < 400 && (await redis.keys(`${prefix}*`)).length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const [key] = await redis.keys(`${prefix}*`);
  console.log(`kept in Redis: ${((await redis.strlen(key)) / 2 ** 20).toFixed(1)} MiB`);
} finally {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
}
process.exit(0);
