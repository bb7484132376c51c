/**
 * A 2026-07-28-only upstream (examples/modern, a real child process over Streamable HTTP)
 * behind the gateway, spoken to in its own revision: era learned by server/discover and shown
 * in /readyz, its MRTR tools used natively by the official v2 client, the gateway's own signed
 * requestState around the upstream's (tampered, replayed, foreign and other-principal states
 * refused), answers to keys never asked dropped, an upstream that loops stopped, merged caching
 * hints, list changes relayed from the upstream's listen stream to the gateway's.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { MCP_HEADERS, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream, startStatelessFixture, type HttpServerProcess } from '../support/http-upstream.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { statelessMeta, statelessRequest, postStateless } from '../support/stateless.js';
import { SseReader } from '../support/sse.js';
import { until } from '../support/wait.js';

const ALL = statelessMeta({ elicitation: {}, sampling: {}, roots: {} });

let fixture: HttpServerProcess;
let gw: RunningGateway;

function config(extra: Record<string, unknown> = {}) {
  return resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      stateless: { maxInputRounds: 3 },
      upstreams: [httpUpstream('modern', fixture.url, { prefix: '' })],
      ...extra,
    },
    {},
  );
}

function call(
  g: RunningGateway,
  id: number,
  name: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const { body, headers: h } = statelessRequest(id, 'tools/call', { name, arguments: {}, _meta: ALL, ...extra });
  return post(g.url, body, { ...h, ...headers });
}

beforeAll(async () => {
  fixture = await startStatelessFixture();
  gw = await startGateway(config());
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await fixture?.stop();
});

describe('a 2026-07-28 upstream', () => {
  it('is learned by server/discover and reported in /readyz', async () => {
    const ready = (await (await fetch(`${gw.base}/readyz`)).json()) as {
      upstreams: Record<string, Record<string, unknown>>;
    };
    expect(ready.upstreams.modern).toMatchObject({ state: 'ready', era: 'modern', protocolVersion: '2026-07-28' });
  });

  it('offers its 2026-only tools in the catalog, with the smaller ttl of the parts', async () => {
    const list = (await postStateless(gw, 1, 'tools/list')).json.result;
    expect(list.tools.map((t: { name: string }) => t.name)).toContain('test_input_required_result_multi_round');
    // The gateway's own listTtlMs is 60000; the upstream said 30000 of its part.
    expect(list).toMatchObject({ resultType: 'complete', ttlMs: 30000, cacheScope: 'public' });
  });

  it('the official v2 client (auto) fulfils elicitation, sampling and roots natively', async () => {
    const client = new Client(
      { name: 'v2-auto', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: {}, sampling: {}, roots: {} } },
    );
    client.setRequestHandler('elicitation/create', async (req) => ({
      action: 'accept' as const,
      content: (String(req.params.message).includes('color') ? { color: 'teal' } : { name: 'Ada' }) as Record<
        string,
        string
      >,
    }));
    client.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'Paris' },
      model: 'm',
      stopReason: 'endTurn',
    }));
    client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    await client.connect(new StreamableHTTPClientTransport(gw.url));
    try {
      expect(toolText(await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }))).toBe(
        'Hello, Ada!',
      );
      expect(toolText(await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} }))).toBe(
        'The model said: Paris',
      );
      expect(toolText(await client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} }))).toBe(
        'Roots: file:///work',
      );
      expect(
        toolText(await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} })),
      ).toBe('Paris Ada; roots: file:///work');
      expect(toolText(await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }))).toBe(
        'Ada likes teal',
      );
    } finally {
      await client.close();
    }
  });

  it('wraps the upstream requestState in its own, and gives the upstream its own back', async () => {
    const first = (await call(gw, 1, 'test_input_required_result_request_state')).json.result;
    expect(first.resultType).toBe('input_required');
    expect(first.requestState).toMatch(/^gw1\./);
    const done = (
      await call(gw, 2, 'test_input_required_result_request_state', {
        inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
        requestState: first.requestState,
      })
    ).json.result;
    expect(toolText(done)).toContain('state-ok');
  });

  it('refuses a tampered, replayed or foreign requestState with -32602', async () => {
    const answer = { confirm: { action: 'accept', content: { ok: true } } };
    const first = (await call(gw, 1, 'test_input_required_result_request_state')).json.result;
    const tampered = await call(gw, 2, 'test_input_required_result_request_state', {
      inputResponses: answer,
      requestState: `${first.requestState}x`,
    });
    expect(tampered.json.error).toMatchObject({ code: -32602, data: { type: 'REQUEST_STATE_INVALID' } });
    // Another request's state (another tool): refused, though well signed.
    const other = (await call(gw, 3, 'test_input_required_result_tampered_state')).json.result;
    const foreign = await call(gw, 4, 'test_input_required_result_request_state', {
      inputResponses: answer,
      requestState: other.requestState,
    });
    expect(foreign.json.error).toMatchObject({ code: -32602 });
    expect(foreign.json.error.message).toContain('another request');
    // Used once, then refused.
    expect(
      (
        await call(gw, 5, 'test_input_required_result_request_state', {
          inputResponses: answer,
          requestState: first.requestState,
        })
      ).json.result.resultType,
    ).toBe('complete');
    const replayed = await call(gw, 6, 'test_input_required_result_request_state', {
      inputResponses: answer,
      requestState: first.requestState,
    });
    expect(replayed.json.error).toMatchObject({ code: -32602 });
    expect(replayed.json.error.message).toContain('already used');
    // Not ours at all.
    expect(
      (
        await call(gw, 7, 'test_input_required_result_request_state', {
          inputResponses: answer,
          requestState: 'made-up',
        })
      ).json.error,
    ).toMatchObject({ code: -32602 });
  });

  it('answers to input keys never asked do not reach the upstream', async () => {
    const first = (await call(gw, 1, 'inspect_inputs')).json.result;
    expect(Object.keys(first.inputRequests)).toEqual(['a']);
    const answer = { action: 'accept', content: { name: 'x' } };
    const done = (
      await call(gw, 2, 'inspect_inputs', {
        inputResponses: { a: answer, evil: answer, __proto__x: answer },
        requestState: first.requestState,
      })
    ).json.result;
    expect(toolText(done)).toBe('keys: a');
  });

  it('stops an upstream that asks for input round after round (stateless.maxInputRounds)', async () => {
    let state: string | undefined;
    let last: any;
    for (let round = 0; round < 5; round++) {
      last = (
        await call(
          gw,
          10 + round,
          'loop_input_required',
          state ? { inputResponses: { again: { action: 'accept', content: { name: 'n' } } }, requestState: state } : {},
        )
      ).json;
      if (last.error) break;
      state = last.result.requestState;
    }
    expect(last.error).toMatchObject({ code: -32008, data: { type: 'INPUT_ROUNDS_EXCEEDED', maxRounds: 3 } });
  });

  it('passes the client capabilities on: only what it declared is asked for', async () => {
    const r = (await call(gw, 1, 'test_input_required_result_capabilities', { _meta: statelessMeta({ sampling: {} }) }))
      .json.result;
    expect(Object.values(r.inputRequests).map((q: any) => q.method)).toEqual(['sampling/createMessage']);
  });

  it('relays the upstream list change to listen streams and refreshes the catalog', async () => {
    const { body, headers } = statelessRequest('listen-1', 'subscriptions/listen', {
      notifications: { toolsListChanged: true },
    });
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });
    const reader = new SseReader(res);
    expect(JSON.parse((await reader.next())!.data).method).toBe('notifications/subscriptions/acknowledged');
    await call(gw, 1, 'toggle_extra_tool');
    const change = JSON.parse((await reader.next(5000))!.data);
    expect(change).toMatchObject({ method: 'notifications/tools/list_changed' });
    await until(
      'the catalog to list "extra"',
      async () =>
        (await postStateless(gw, 2, 'tools/list')).json.result.tools.some((t: { name: string }) => t.name === 'extra'),
      5000,
    );
    await call(gw, 3, 'toggle_extra_tool');
    await reader.cancel();
  });
});

describe('changes of a 2026-07-28 upstream, to clients of both eras', () => {
  it('a 2025 session (SDK v1) hears resources/updated of what it subscribed to, and tools/list_changed', async () => {
    const client = new ClientV1({ name: 'v1-watch', version: '1.0.0' });
    const updated: string[] = [];
    let toolsChanged = 0;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void toolsChanged++);
    await client.connect(new TransportV1(gw.url));
    try {
      await client.subscribeResource({ uri: 'modern://note' });
      // The gateway's listen stream to the upstream is replaced by one that follows the note.
      await until(
        'the update to arrive',
        async () => {
          await client.callTool({ name: 'touch_note', arguments: {} });
          return updated.includes('modern://note');
        },
        10_000,
        200,
      );
      await client.callTool({ name: 'toggle_extra_tool', arguments: {} });
      await until('tools/list_changed to arrive', () => toolsChanged > 0, 10_000);
      await client.callTool({ name: 'toggle_extra_tool', arguments: {} });
    } finally {
      await client.close();
    }
  });

  it('a 2026 listen stream follows the resource too', async () => {
    const { body, headers } = statelessRequest('listen-r', 'subscriptions/listen', {
      notifications: { resourceSubscriptions: ['modern://note', 'modern://nothing'] },
    });
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });
    const reader = new SseReader(res);
    const ack = JSON.parse((await reader.next())!.data);
    expect(ack.params.notifications).toEqual({ resourceSubscriptions: ['modern://note'] });
    let update: any;
    await until(
      'the update on the listen stream',
      async () => {
        await call(gw, 1, 'touch_note');
        const ev = await reader.next(300).catch(() => undefined);
        if (ev) update = JSON.parse(ev.data);
        return update !== undefined;
      },
      10_000,
      0,
    );
    expect(update).toMatchObject({
      method: 'notifications/resources/updated',
      params: { uri: 'modern://note', _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-r' } },
    });
    await reader.cancel();
  });
});

describe('requestState and principals', () => {
  let issuer: JwtIssuer;
  let authed: RunningGateway;

  beforeAll(async () => {
    issuer = await startJwtIssuer();
    authed = await startGateway(config({ auth: issuer.authConfig }));
  }, 30_000);

  afterAll(async () => {
    await authed?.stop();
    await issuer?.close();
  });

  it("refuses another principal's state", async () => {
    const alice = await issuer.bearer('alice');
    const bob = await issuer.bearer('bob');
    const first = (await call(authed, 1, 'test_input_required_result_request_state', {}, alice)).json.result;
    expect(first.resultType).toBe('input_required');
    const answer = { confirm: { action: 'accept', content: { ok: true } } };
    const stolen = await call(
      authed,
      2,
      'test_input_required_result_request_state',
      { inputResponses: answer, requestState: first.requestState },
      bob,
    );
    expect(stolen.json.error).toMatchObject({ code: -32602, data: { type: 'REQUEST_STATE_INVALID' } });
    const own = await call(
      authed,
      3,
      'test_input_required_result_request_state',
      { inputResponses: answer, requestState: first.requestState },
      alice,
    );
    expect(toolText(own.json.result)).toContain('state-ok');
  });
});
