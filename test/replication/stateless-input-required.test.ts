/**
 * Two replicas on one real Redis, no affinity: a stateless (2026-07-28) call whose worker asks
 * for input is answered with input_required by one replica, and the retry, sent to the other,
 * continues the same call there (forwarded to the replica running the worker). Also with the
 * official v2 client, whose every request goes to the next replica in turn.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, stdioUpstream, toolText, type RunningGateway } from '../support/gateway.js';
import { MODERN_VERSION, statelessMeta, postStateless } from '../support/stateless.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const FIXTURE = resolve(ROOT, 'examples/conformance/server.mjs');
const META = statelessMeta({ elicitation: {} });

let redis: RedisServer;
const replicas: RunningGateway[] = [];

function callTool(
  replica: RunningGateway,
  id: number,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return postStateless(replica, id, 'tools/call', { name: 'test_elicitation', arguments: args, ...extra, _meta: META });
}

const workers = (r: RunningGateway) => internals(r.gateway.server).perSessionWorkers('fx');

beforeAll(async () => {
  redis = await startRedis();
  replicas.push(
    ...(await startReplicas(2, {
      sessions: { redisUrl: redis.url },
      upstreams: [stdioUpstream('fx', FIXTURE, { mode: 'per-session', prefix: '', pool: { max: 8 } })],
    })),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe('input-required across replicas', () => {
  it('the retry reaches the other replica and continues the call where its worker runs', async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const first = (await callTool(a, 1, { message: 'Across?' })).json.result;
    expect(first.resultType).toBe('input_required');
    expect(workers(a)).toBe(1);
    expect(workers(b)).toBe(0);
    const [key] = Object.keys(first.inputRequests);

    // Altered on the way: the replica running the worker checks the signature, not the one asked.
    const tampered = await callTool(
      b,
      2,
      { message: 'Across?' },
      { inputResponses: { [key!]: { action: 'decline' } }, requestState: `${first.requestState}x` },
    );
    expect(tampered.json.error).toMatchObject({ code: -32602 });

    const second = await callTool(
      b,
      3,
      { message: 'Across?' },
      {
        inputResponses: { [key!]: { action: 'accept', content: { username: 'bob', email: 'bob@example.com' } } },
        requestState: first.requestState,
      },
    );
    expect(second.json.result.resultType).toBe('complete');
    expect(toolText(second.json.result)).toBe(
      'User response: action=accept, content={"username":"bob","email":"bob@example.com"}',
    );
    expect(workers(b)).toBe(0);
    await until('the worker on the first replica to stop', () => workers(a) === 0, 5000);
  });

  it('the official v2 client, every request to the next replica, fulfils the round', async () => {
    let next = 0;
    const roundRobin: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      url.host = replicas[next++ % replicas.length]!.url.host;
      return fetch(url, init);
    };
    const client = new Client(
      { name: 'v2-rr', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN_VERSION } }, capabilities: { elicitation: {} } },
    );
    client.setRequestHandler('elicitation/create', async () => ({
      action: 'accept',
      content: { username: 'rr', email: 'rr@example.com' },
    }));
    await client.connect(new StreamableHTTPClientTransport(replicas[0]!.url, { fetch: roundRobin }));
    try {
      for (let i = 0; i < 3; i++) {
        const result = await client.callTool({ name: 'test_elicitation', arguments: { message: `round ${i}` } });
        expect(toolText(result)).toBe(
          'User response: action=accept, content={"username":"rr","email":"rr@example.com"}',
        );
      }
    } finally {
      await client.close();
    }
    expect(next).toBeGreaterThanOrEqual(6);
    await until('every worker to stop', () => replicas.every((r) => workers(r) === 0), 5000);
  });
});
