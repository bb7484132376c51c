/**
 * Remote upstreams over Streamable HTTP, end to end: the official SDK client talks to the
 * gateway, which talks over real loopback HTTP to examples/echo-http (SDK server, stateful) in
 * shared mode and in per-session mode, and to @modelcontextprotocol/server-everything
 * (streamableHttp) in per-session mode: lists, calls, progress, and server-to-client requests
 * (sampling, elicitation).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream, startEchoHttp, startEverything, type HttpServerProcess } from '../support/http-upstream.js';

let echo: HttpServerProcess;
/** A second examples/echo-http, fronted per-session (its own name keeps its resource apart). */
let mine: HttpServerProcess;
let everything: HttpServerProcess;
let gw: RunningGateway;
const clients: Client[] = [];

async function connect(name: string): Promise<{ client: Client; listChanged: string[] }> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
  const listChanged: string[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    role: 'assistant',
    content: { type: 'text', text: `${name} says hi to ${JSON.stringify(req.params.messages[0]?.content)}` },
    model: `model-of-${name}`,
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { name: `${name}-user`, check: true },
  }));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged.push('tools');
  });
  await client.connect(new StreamableHTTPClientTransport(gw.url));
  clients.push(client);
  return { client, listChanged };
}

beforeAll(async () => {
  [echo, mine, everything] = await Promise.all([
    startEchoHttp(),
    startEchoHttp(0, ['--name', 'mine']),
    startEverything('streamableHttp'),
  ]);
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        httpUpstream('echo', echo.url, { pool: { min: 1, max: 2 } }),
        httpUpstream('mine', mine.url, { mode: 'per-session', pool: { max: 8 } }),
        httpUpstream('everything', everything.url, { mode: 'per-session', pool: { max: 8 }, timeoutMs: 20_000 }),
      ],
    }),
  );
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gw?.stop();
  await Promise.all([echo?.stop(), mine?.stop(), everything?.stop()]);
});

describe('remote upstreams over Streamable HTTP', () => {
  it('merges both remote catalogs, prefixed', async () => {
    const { client } = await connect('lister');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'echo__echo',
        'echo__add',
        'echo__sleep',
        'echo__sample',
        'everything__echo',
        'everything__trigger-sampling-request',
      ]),
    );
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(prompts).toContain('echo__greeting');
    const read = await client.readResource({ uri: 'echo-http://readme' });
    expect(read.contents[0]).toMatchObject({ text: 'echo-http readme' });
  });

  it('calls tools of a shared remote upstream, with progress streamed before the result', async () => {
    const { client } = await connect('caller');
    expect(toolText(await client.callTool({ name: 'echo__add', arguments: { a: 2, b: 3 } }))).toBe('5');
    const progress: number[] = [];
    const slept = await client.callTool({ name: 'echo__sleep', arguments: { ms: 200, steps: 4 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(toolText(slept)).toBe('slept 200ms');
    expect(progress).toEqual([1, 2, 3, 4]);
    const prompt = await client.getPrompt({ name: 'echo__greeting', arguments: { name: 'Ada' } });
    expect(prompt.messages[0]?.content).toMatchObject({ text: 'Hello, Ada!' });
  });

  it('keeps concurrent calls of many clients apart on shared upstream sessions', async () => {
    const { client: a } = await connect('a');
    const { client: b } = await connect('b');
    const calls = Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? a : b).callTool({ name: 'echo__echo', arguments: { text: `t${i}` } }).then(toolText),
    );
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 40 }, (_, i) => `t${i}`));
  });

  it('round-trips sampling and elicitation from a per-session remote upstream to the calling client', async () => {
    const { client } = await connect('alice');
    const sampled = await client.callTool({
      name: 'everything__trigger-sampling-request',
      arguments: { prompt: 'hello', maxTokens: 10 },
    });
    expect(toolText(sampled)).toContain('alice says hi');
    expect(toolText(sampled)).toContain('model-of-alice');
    const elicited = await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} });
    expect(toolText(elicited)).toContain('alice-user');
  });

  it('per-session on our SDK server: sampling asked of the calling client, progress, and one upstream session per client', async () => {
    const { client: dana } = await connect('dana');
    const { client: eve } = await connect('eve');
    expect(toolText(await dana.callTool({ name: 'mine__sample', arguments: { prompt: 'ping?' } }))).toBe(
      'model-of-dana: dana says hi to {"type":"text","text":"ping?"}',
    );
    expect(toolText(await eve.callTool({ name: 'mine__sample', arguments: { prompt: 'pong?' } }))).toContain(
      'model-of-eve',
    );
    const progress: number[] = [];
    await dana.callTool({ name: 'mine__sleep', arguments: { ms: 100, steps: 2 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(progress).toEqual([1, 2]);
    const sessionOf = async (c: Client) =>
      (JSON.parse(toolText(await c.callTool({ name: 'mine__whoami', arguments: {} }))) as { session: string }).session;
    const [d1, d2, e1] = [await sessionOf(dana), await sessionOf(dana), await sessionOf(eve)];
    expect(d1).toBe(d2);
    expect(d1).not.toBe(e1);
  });

  it('streams progress of a per-session remote upstream', async () => {
    const { client } = await connect('bob');
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'everything__trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
      undefined,
      {
        onprogress: (p) => progress.push(p.progress),
      },
    );
    expect(toolText(result)).toMatch(/completed/i);
    expect(progress.length).toBe(3);
  });

  it('a shared remote worker cannot ask a client for sampling (only per-session ones can): the tool sees the refusal', async () => {
    const { client } = await connect('carol');
    const result = await client.callTool({ name: 'echo__sample', arguments: { prompt: 'x' } });
    // The shared worker's client (the gateway) refuses; the tool reports its failure.
    expect(result.isError).toBe(true);
  });

  it('relays a remote list_changed (on the upstream GET stream) to clients', async () => {
    const { client, listChanged } = await connect('watcher');
    // The client needs its own GET stream open to hear notifications unrelated to a request.
    await new Promise((r) => setTimeout(r, 200));
    const before = (await client.listTools()).tools.map((t) => t.name);
    expect(before).not.toContain('echo__extra');
    expect(toolText(await client.callTool({ name: 'echo__toggle', arguments: {} }))).toBe('on');
    for (let i = 0; i < 100 && listChanged.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(listChanged.length).toBeGreaterThan(0);
    let after: string[] = [];
    for (let i = 0; i < 100 && !after.includes('echo__extra'); i++) {
      after = (await client.listTools()).tools.map((t) => t.name);
      if (!after.includes('echo__extra')) await new Promise((r) => setTimeout(r, 50));
    }
    expect(after).toContain('echo__extra');
    await client.callTool({ name: 'echo__toggle', arguments: {} });
  });

  it('reports each remote upstream in /readyz with its circuit', async () => {
    const res = await fetch(new URL('/readyz', gw.base));
    const body = (await res.json()) as { upstreams: Record<string, { state: string; circuit: string }> };
    expect(res.status).toBe(200);
    expect(body.upstreams.echo).toMatchObject({ state: 'ready', circuit: 'closed' });
    expect(body.upstreams.everything).toMatchObject({ state: 'ready', circuit: 'closed' });
  });
});
