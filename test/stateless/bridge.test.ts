/**
 * The bridge: 2025 session clients (the official SDK v1) calling a 2026-07-28-only upstream's
 * MRTR tools. Each input_required round becomes server-to-client requests (elicitation,
 * sampling, roots) on the client's session, the answers go back upstream as inputResponses with
 * the state, until the final result. Three replicas on one real Redis, every HTTP request to the
 * next one in turn; the official v2 client does the same natively, its state signed with the
 * replicas' shared secret.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream, startStatelessFixture, type HttpServerProcess } from '../support/http-upstream.js';
import { statelessMeta, statelessRequest } from '../support/stateless.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { roundRobinFetch, startReplicas } from '../support/replicas.js';

let redis: RedisServer;
let fixture: HttpServerProcess;
const replicas: RunningGateway[] = [];
const hits = [0, 0, 0];

/** An SDK v1 client (a 2025 session) with handlers for what it declares. */
async function v1Client(capabilities: {
  elicitation?: Record<string, never>;
  sampling?: Record<string, never>;
  roots?: Record<string, never>;
}): Promise<Client> {
  const client = new Client({ name: 'v1-bridge', version: '1.0.0' }, { capabilities });
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const message = String(req.params.message);
      return {
        action: 'accept',
        content: message.includes('color')
          ? { color: 'green' }
          : message.includes('context')
            ? { context: 'tests' }
            : { name: 'Grace' },
      };
    });
  }
  if (capabilities.sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'Hi' },
      model: 'm',
    }));
  if (capabilities.roots)
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///repo', name: 'repo' }] }));
  await client.connect(new StreamableHTTPClientTransport(replicas[0]!.url, { fetch: roundRobinFetch(replicas, hits) }));
  return client;
}

beforeAll(async () => {
  redis = await startRedis();
  fixture = await startStatelessFixture();
  replicas.push(
    ...(await startReplicas(3, {
      sessions: { redisUrl: redis.url },
      stateless: { stateSecret: 'a-secret-every-replica-shares-0123456789', maxInputRounds: 3 },
      upstreams: [httpUpstream('modern', fixture.url, { prefix: '' })],
    })),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await fixture?.stop();
  await redis?.stop();
});

describe('2025 session clients and a 2026-07-28-only upstream', () => {
  it('SDK v1: elicitation, sampling and roots answered on the session, round after round, across 3 replicas', async () => {
    const before = [...hits];
    const client = await v1Client({ elicitation: {}, sampling: {}, roots: {} });
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('test_input_required_result_multi_round');
      expect(toolText(await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }))).toBe(
        'Hello, Grace!',
      );
      expect(toolText(await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} }))).toBe(
        'The model said: Hi',
      );
      expect(toolText(await client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} }))).toBe(
        'Roots: file:///repo',
      );
      expect(
        toolText(await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} })),
      ).toBe('Hi Grace; roots: file:///repo');
      // Two rounds, the upstream's state carried between them by the gateway.
      expect(toolText(await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }))).toBe(
        'Grace likes green',
      );
      const prompt = await client.getPrompt({ name: 'test_input_required_result_prompt' });
      expect(prompt.messages[0]!.content).toMatchObject({ type: 'text', text: 'Use this context: tests' });
    } finally {
      await client.close();
    }
    // Every replica took part.
    for (let i = 0; i < 3; i++) expect(hits[i]!).toBeGreaterThan(before[i]!);
  });

  it('a client without the capability gets -32021 naming what was needed', async () => {
    const client = await v1Client({ elicitation: {} });
    try {
      const err = await client
        .callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(-32021);
      expect((err as McpError).data).toMatchObject({
        type: 'MISSING_CLIENT_CAPABILITY',
        requiredCapabilities: { sampling: {}, roots: {} },
      });
      // The session goes on.
      expect(toolText(await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }))).toBe(
        'Hello, Grace!',
      );
    } finally {
      await client.close();
    }
  });

  it('an upstream that loops on input_required ends in a typed error', async () => {
    const client = await v1Client({ elicitation: {} });
    try {
      const err = await client.callTool({ name: 'loop_input_required', arguments: {} }).catch((e: unknown) => e);
      expect((err as McpError).code).toBe(-32008);
      expect((err as McpError).data).toMatchObject({ type: 'INPUT_ROUNDS_EXCEEDED', maxRounds: 3 });
    } finally {
      await client.close();
    }
  });

  it('SDK v2 (auto) natively, elicitation, sampling and roots, every request to the next replica: the shared secret verifies the state anywhere', async () => {
    const before = [...hits];
    const client = new ClientV2(
      { name: 'v2-rr', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: {}, sampling: {}, roots: {} } },
    );
    client.setRequestHandler('elicitation/create', async (req) => ({
      action: 'accept' as const,
      content: (String(req.params.message).includes('color') ? { color: 'red' } : { name: 'Lin' }) as Record<
        string,
        string
      >,
    }));
    client.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'Bonjour' },
      model: 'm',
      stopReason: 'endTurn',
    }));
    client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///v2', name: 'v2' }] }));
    await client.connect(new TransportV2(replicas[0]!.url, { fetch: roundRobinFetch(replicas, hits) }));
    try {
      expect(toolText(await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }))).toBe(
        'Lin likes red',
      );
      expect(toolText(await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }))).toBe(
        'Hello, Lin!',
      );
      expect(toolText(await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} }))).toBe(
        'The model said: Bonjour',
      );
      expect(toolText(await client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} }))).toBe(
        'Roots: file:///v2',
      );
      expect(
        toolText(await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} })),
      ).toBe('Bonjour Lin; roots: file:///v2');
    } finally {
      await client.close();
    }
    for (let i = 0; i < 3; i++) expect(hits[i]!).toBeGreaterThan(before[i]!);
  });

  it('a requestState used on one replica is refused on another (the used-state record is in Redis)', async () => {
    const call = (replica: number, id: number, extra: Record<string, unknown> = {}) => {
      const { body, headers } = statelessRequest(id, 'tools/call', {
        name: 'test_input_required_result_request_state',
        arguments: {},
        _meta: statelessMeta({ elicitation: {} }),
        ...extra,
      });
      return post(replicas[replica]!.url, body, headers);
    };
    const answer = { confirm: { action: 'accept', content: { ok: true } } };
    const first = (await call(0, 1)).json.result;
    expect(first.resultType).toBe('input_required');
    const used = (await call(1, 2, { inputResponses: answer, requestState: first.requestState })).json.result;
    expect(toolText(used)).toContain('state-ok');
    for (const replica of [0, 1, 2]) {
      const replayed = (await call(replica, 3 + replica, { inputResponses: answer, requestState: first.requestState }))
        .json;
      expect(replayed.error).toMatchObject({ code: -32602, data: { type: 'REQUEST_STATE_INVALID' } });
      expect(replayed.error.message).toContain('already used');
    }
    // Two replicas given the same fresh state at once: exactly one of them takes it.
    const second = (await call(2, 10)).json.result;
    const raced = await Promise.all([
      call(0, 11, { inputResponses: answer, requestState: second.requestState }),
      call(1, 12, { inputResponses: answer, requestState: second.requestState }),
    ]);
    expect(raced.filter((r) => r.json.result?.resultType === 'complete')).toHaveLength(1);
    expect(raced.filter((r) => r.json.error?.code === -32602)).toHaveLength(1);
    // The record is Redis's, with the state's lifetime.
    expect(await redis.command('EVAL', "return #redis.call('KEYS', '*spent:*')", '0')).toMatch(/^:[2-9]/);
  });
});
