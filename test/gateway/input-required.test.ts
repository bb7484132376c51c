/**
 * Input-required results: a stateless (2026-07-28) client calls a tool of a per-session 2025
 * upstream that asks its client something (elicitation, sampling). The gateway answers with
 * input_required, the client retries with inputResponses and requestState, and the same
 * upstream call finishes. Raw HTTP for every edge, then the official v2 client, which fulfils
 * the rounds by itself. The upstream is the conformance fixture, a real child process per chain.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, exampleConfig, startGateway, stdioUpstream, toolText, type RunningGateway } from '../support/gateway.js';
import { MODERN_VERSION, statelessMeta, postStateless } from '../support/stateless.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const FIXTURE = resolve(ROOT, 'examples/conformance/server.mjs');

let gw: RunningGateway;

/** One stateless tools/call of the fixture's tool, with whatever extra params the round needs. */
function callTool(
  id: number,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = { elicitation: {}, sampling: {} },
) {
  return postStateless(gw, id, 'tools/call', { name, arguments: args, ...extra, _meta: statelessMeta(capabilities) });
}

const workers = () => internals(gw.gateway.server).perSessionWorkers('fx');

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [stdioUpstream('fx', FIXTURE, { mode: 'per-session', prefix: '', pool: { max: 16 } })],
      stateless: { inputTimeoutMs: 1500 },
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
});

describe('input-required results over raw HTTP', () => {
  it('elicitation: input_required with the upstream question, then the result of the same call', async () => {
    const first = await callTool(1, 'test_elicitation', { message: 'Who are you?' });
    expect(first.status).toBe(200);
    const r1 = first.json.result;
    expect(r1.resultType).toBe('input_required');
    expect(r1.ttlMs).toBeUndefined();
    const keys = Object.keys(r1.inputRequests);
    expect(keys).toHaveLength(1);
    expect(r1.inputRequests[keys[0]!]).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Who are you?', requestedSchema: { type: 'object' } },
    });
    expect(typeof r1.requestState).toBe('string');
    expect(workers()).toBe(1);
    expect(await fetch(`${gw.base}/metrics`).then((r) => r.text())).toMatch(/^mcpgw_input_chains 1$/m);

    const answer = { action: 'accept', content: { username: 'alice', email: 'alice@example.com' } };
    const second = await callTool(
      2,
      'test_elicitation',
      { message: 'Who are you?' },
      { inputResponses: { [keys[0]!]: answer }, requestState: r1.requestState },
    );
    expect(second.status).toBe(200);
    expect(second.json.result.resultType).toBe('complete');
    expect(toolText(second.json.result)).toBe(
      'User response: action=accept, content={"username":"alice","email":"alice@example.com"}',
    );
    await until('the chain worker to stop', () => workers() === 0, 5000);
  });

  it('sampling: the same round trip for sampling/createMessage', async () => {
    const first = await callTool(3, 'test_sampling', { prompt: 'Say hi' });
    const r1 = first.json.result;
    const [key] = Object.keys(r1.inputRequests);
    expect(r1.inputRequests[key!]).toMatchObject({ method: 'sampling/createMessage', params: { maxTokens: 100 } });
    const reply = {
      role: 'assistant',
      content: { type: 'text', text: 'hi there' },
      model: 'test-model',
      stopReason: 'endTurn',
    };
    const second = await callTool(
      4,
      'test_sampling',
      { prompt: 'Say hi' },
      { inputResponses: { [key!]: reply }, requestState: r1.requestState },
    );
    expect(toolText(second.json.result)).toBe('LLM response: hi there');
  });

  it('a retry without the answer is asked again, under a new requestState; the old one is then stale', async () => {
    const r1 = (await callTool(5, 'test_elicitation', { message: 'again?' })).json.result;
    const [key] = Object.keys(r1.inputRequests);
    const r2 = (
      await callTool(
        6,
        'test_elicitation',
        { message: 'again?' },
        { inputResponses: {}, requestState: r1.requestState },
      )
    ).json.result;
    expect(r2.resultType).toBe('input_required');
    expect(Object.keys(r2.inputRequests)).toEqual([key]);
    expect(r2.requestState).not.toBe(r1.requestState);
    const stale = await callTool(
      7,
      'test_elicitation',
      { message: 'again?' },
      { inputResponses: { [key!]: { action: 'decline' } }, requestState: r1.requestState },
    );
    expect(stale.json.error).toMatchObject({ code: -32602, data: { type: 'INVALID_PARAMS' } });
    const done = await callTool(
      8,
      'test_elicitation',
      { message: 'again?' },
      { inputResponses: { [key!]: { action: 'decline' } }, requestState: r2.requestState },
    );
    expect(toolText(done.json.result)).toBe('User response: action=decline, content={}');
  });

  it('a question the upstream asks while the client is away (between rounds) is asked on the next round', async () => {
    const r1 = (await callTool(20, 'test_elicitation_pair', {})).json.result;
    expect(Object.values(r1.inputRequests).map((r: any) => r.params.message)).toEqual(['First?']);
    // The second question comes 100 ms after the first, while no request of the client waits.
    await new Promise((r) => setTimeout(r, 400));
    const [first] = Object.keys(r1.inputRequests);
    const r2 = (
      await callTool(
        21,
        'test_elicitation_pair',
        {},
        {
          inputResponses: { [first!]: { action: 'accept', content: { answer: 'one' } } },
          requestState: r1.requestState,
        },
      )
    ).json.result;
    expect(r2.resultType).toBe('input_required');
    expect(Object.values(r2.inputRequests).map((r: any) => r.params.message)).toEqual(['Second?']);
    const [second] = Object.keys(r2.inputRequests);
    const done = await callTool(
      22,
      'test_elicitation_pair',
      {},
      {
        inputResponses: { [second!]: { action: 'accept', content: { answer: 'two' } } },
        requestState: r2.requestState,
      },
    );
    expect(toolText(done.json.result)).toBe('first={"answer":"one"} second={"answer":"two"}');
  });

  it('a tampered requestState, or one for another tool, is rejected (-32602) and the real one still works', async () => {
    const r1 = (await callTool(9, 'test_elicitation', { message: 'tamper?' })).json.result;
    const [key] = Object.keys(r1.inputRequests);
    const answers = { [key!]: { action: 'cancel' } };
    const tampered = await callTool(
      10,
      'test_elicitation',
      { message: 'tamper?' },
      { inputResponses: answers, requestState: `${r1.requestState}-TAMPERED` },
    );
    expect(tampered.json.error).toMatchObject({ code: -32602 });
    const otherTool = await callTool(
      11,
      'test_sampling',
      { prompt: 'x' },
      { inputResponses: answers, requestState: r1.requestState },
    );
    expect(otherTool.json.error).toMatchObject({ code: -32602 });
    const garbage = await callTool(
      12,
      'test_elicitation',
      { message: 'tamper?' },
      { inputResponses: answers, requestState: 'not-a-state' },
    );
    expect(garbage.json.error).toMatchObject({ code: -32602 });
    const done = await callTool(
      13,
      'test_elicitation',
      { message: 'tamper?' },
      { inputResponses: answers, requestState: r1.requestState },
    );
    expect(toolText(done.json.result)).toBe('User response: action=cancel, content={}');
  });

  it('an upstream asking for what the client did not declare: 400 -32021 naming the capability, and the worker stops', async () => {
    // The worker was told the client's own capabilities; this tool asks for sampling regardless.
    const r = await callTool(14, 'test_sampling', { prompt: 'no cap' }, {}, { elicitation: {} });
    expect(r.status).toBe(400);
    expect(r.json.id).toBe(14);
    expect(r.json.error).toMatchObject({
      code: -32021,
      data: { type: 'MISSING_CLIENT_CAPABILITY', requiredCapabilities: { sampling: {} } },
    });
    await until('the chain worker to stop', () => workers() === 0, 5000);
  });

  it('a client that never retries: the call is cancelled after inputTimeoutMs, and the late retry is refused', async () => {
    const r1 = (await callTool(15, 'test_elicitation', { message: 'later' })).json.result;
    expect(workers()).toBe(1);
    await until('the chain to expire', () => workers() === 0, 5000);
    const [key] = Object.keys(r1.inputRequests);
    const late = await callTool(
      16,
      'test_elicitation',
      { message: 'later' },
      { inputResponses: { [key!]: { action: 'decline' } }, requestState: r1.requestState },
    );
    expect(late.json.error).toMatchObject({ code: -32602 });
  });

  it('tools that need no input answer at once, and chains of many clients do not mix', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const r1 = (await callTool(100 + i, 'test_elicitation', { message: `client ${i}` })).json.result;
        const [key] = Object.keys(r1.inputRequests);
        expect(r1.inputRequests[key!].params.message).toBe(`client ${i}`);
        const r2 = await callTool(
          200 + i,
          'test_elicitation',
          { message: `client ${i}` },
          {
            inputResponses: { [key!]: { action: 'accept', content: { username: `u${i}`, email: `u${i}@x` } } },
            requestState: r1.requestState,
          },
        );
        return toolText(r2.json.result);
      }),
    );
    results.forEach((text, i) => expect(text).toContain(`"username":"u${i}"`));
    expect(toolText((await callTool(300, 'test_simple_text', {})).json.result)).toBe(
      'This is a simple text response for testing.',
    );
    await until('every chain worker to stop', () => workers() === 0, 5000);
  });
});

describe('the official v2 client fulfils the rounds by itself', () => {
  it('elicitation and sampling through input-required results, pinned to 2026-07-28', async () => {
    const client = new Client(
      { name: 'v2-mrtr', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN_VERSION } }, capabilities: { elicitation: {}, sampling: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { username: 'v2', email: 'v2@example.com' } };
    });
    client.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled' },
      model: 'm',
      stopReason: 'endTurn',
    }));
    await client.connect(new StreamableHTTPClientTransport(gw.url));
    try {
      expect(client.getProtocolEra()).toBe('modern');
      const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Your name?' } });
      expect(toolText(elicited)).toBe(
        'User response: action=accept, content={"username":"v2","email":"v2@example.com"}',
      );
      expect(asked).toEqual(['Your name?']);
      expect(toolText(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } }))).toBe(
        'LLM response: sampled',
      );
      // A second question while the first is out (between rounds): each asked once, both answered.
      asked.length = 0;
      const pair = await client.callTool({ name: 'test_elicitation_pair', arguments: {} });
      expect(toolText(pair)).toBe(
        'first={"username":"v2","email":"v2@example.com"} second={"username":"v2","email":"v2@example.com"}',
      );
      expect(asked.sort()).toEqual(['First?', 'Second?']);
    } finally {
      await client.close();
    }
    await until('every chain worker to stop', () => workers() === 0, 5000);
  });
});
