/**
 * A virtual server's own list (servers[].interceptors) on an ask whose call was forwarded to
 * another replica (issue 33): two replicas on one real redis-server, a 2025 session (SDK v1) opened
 * on /checked through replica A, whose worker of the per-session upstream starts on A; then a call
 * sent to B, which forwards it to A (the owner). The worker's elicitation is checked on A, with the
 * context the forwarded call brought: the endpoint travels with it, so /checked's secrets and pii
 * apply there as they do to a call made on A itself.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import { ANSWER_CARD, askingUpstream } from '../support/asking-server.js';
import { toolText, type RunningGateway } from '../support/gateway.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';

let redis: RedisServer;
let replicas: RunningGateway[] = [];

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(2, {
    sessions: { redisUrl: redis.url },
    upstreams: [askingUpstream('ask')],
    servers: [{ path: '/checked', tools: ['ask__*'], interceptors: [{ name: 'secrets' }, { name: 'pii' }] }],
  });
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

/** A fetch that sends every request to A but a POST naming `tool`, which goes to B; `hits` counts B's. */
function splitFetch(a: RunningGateway, b: RunningGateway, tool: string, hits: { b: number }): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const toB = typeof init?.body === 'string' && init.body.includes(`"${tool}"`);
    if (toB) hits.b++;
    url.host = (toB ? b : a).url.host;
    return fetch(url, init);
  };
}

describe('an ask of a call forwarded to the replica that runs the worker', () => {
  it("passes the list of the endpoint the session came to, on the worker's replica", async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const hits = { b: 0 };
    const asked: string[] = [];
    const client = new Client({ name: 'asks-replicas', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(String(req.params.message));
      return { action: 'accept' as const, content: { name: ANSWER_CARD } };
    });
    const url = new URL('/checked', a.base);
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: splitFetch(a, b, 'ask__ask_secret', hits) }));
    try {
      // On A: the session's worker starts there, and A owns it.
      expect(toolText(await client.callTool({ name: 'ask__hello', arguments: {} }))).toBe('hello');
      const result = await client.callTool({ name: 'ask__ask_secret', arguments: { method: 'elicitation/create' } });
      expect(hits.b).toBe(1);
      expect(internals(a.gateway.server).perSessionWorkers('ask')).toBe(1);
      expect(internals(b.gateway.server).perSessionWorkers('ask')).toBe(0);
      expect(asked).toEqual(['Deploy with [REDACTED:aws-access-key]?']);
      expect(toolText(result)).toBe('answer held the card: no');
    } finally {
      await client.close();
    }
  });
});
