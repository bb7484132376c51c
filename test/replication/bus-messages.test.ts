/**
 * The bus between replicas, from outside: a session deleted through one replica is gone at once
 * from the other's read cache (the change travels over the bus; the cache alone would keep it
 * for 10 s), and messages on the bus that no replica of this version wrote (not JSON, an unknown
 * type, a field of the wrong type, the one-letter keys of older versions) are dropped, while
 * both replicas go on serving. Real Redis, two replicas in this process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, openSession, post, type RunningGateway } from '../support/gateway.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

let redis: RedisServer;
const replicas: RunningGateway[] = [];

beforeAll(async () => {
  redis = await startRedis();
  // The longest cache allowed: only the bus can make a replica drop its copy sooner.
  replicas.push(...(await startReplicas(2, { sessions: { redisUrl: redis.url, cacheMs: 10_000 } })));
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

const inSession = (sid: string) => ({ 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
const ping = (gw: RunningGateway, sid: string) =>
  post(gw.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, inSession(sid));

/** How many subscribers a PUBLISH reached (its integer reply). */
async function publish(channel: string, message: string): Promise<number> {
  return Number(/^:(\d+)/.exec(await redis.command('PUBLISH', channel, message))?.[1]);
}

describe('messages between replicas', () => {
  it('a session deleted through replica A is gone from replica B at once, not after B\u2019s cache expires', async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const sid = await openSession(a.url);
    expect((await ping(b, sid)).status).toBe(200); // B holds a copy now
    const deleted = await fetch(a.url, { method: 'DELETE', headers: { ...MCP_HEADERS, ...inSession(sid) } });
    expect(deleted.status).toBe(200);
    await until(
      'replica B to answer 404 for the deleted session',
      async () => (await ping(b, sid)).status === 404,
      5000,
    );
  });

  it('drops unreadable messages on every channel, and both replicas go on serving', async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const sid = await openSession(a.url);
    const inboxes =
      (await redis.command('PUBSUB', 'CHANNELS', 'mcpgw:replica:*')).match(/mcpgw:replica:[0-9a-f-]+/g) ?? [];
    expect(inboxes).toHaveLength(2);
    const bad = [
      {
        channels: inboxes,
        messages: [
          'not json',
          '[]',
          '{"type":"explode","callId":"x"}',
          '{"t":"ack","id":"x"}',
          '{"t":"release","scope":"' + sid + '"}',
        ],
      },
      {
        channels: ['mcpgw:cancel'],
        messages: [
          'not json',
          '{"scope":1,"requestId":"x"}',
          '{"scope":"s","requestId":{}}',
          `{"scope":"${sid}","id":1}`,
        ],
      },
      { channels: ['mcpgw:session-changes'], messages: ['not json', sid, '{"sessionId":5}'] },
      {
        channels: ['mcpgw:list-changes'],
        messages: [
          'not json',
          '{"replica":"x","upstream":"echo","scope":"s"}',
          '{"replica":"x","upstream":7,"scope":"s","method":"m"}',
        ],
      },
    ];
    for (const { channels, messages } of bad) {
      for (const channel of channels) {
        for (const message of messages)
          expect({ channel, message, heardBy: await publish(channel, message) }).toMatchObject({
            heardBy: channel.includes('replica:') ? 1 : 2,
          });
      }
    }
    for (const gw of [a, b]) {
      const r = await post(
        gw.url,
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'echo__echo', arguments: { text: 'still here' } },
        },
        inSession(sid),
      );
      expect(r.json.result.content[0].text).toBe('still here');
      expect(internals(gw.gateway.server).inFlight).toBe(0);
    }
  });
});
