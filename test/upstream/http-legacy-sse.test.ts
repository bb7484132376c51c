/**
 * `transport: sse`: the deprecated HTTP+SSE transport (2024-11-05), against the official
 * @modelcontextprotocol/server-everything in its `sse` mode (real processes, loopback HTTP):
 * calls, progress and sampling through the gateway, and a server that goes away mid-session.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream, startEverything, type HttpServerProcess } from '../support/http-upstream.js';

let shared: HttpServerProcess;
let perSession: HttpServerProcess;
/** One gateway per server: two server-everything instances list the same resource URIs. */
let gw: RunningGateway;
let gwPerSession: RunningGateway;
const clients: Client[] = [];

async function connect(name: string, to: RunningGateway = gw): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: 'assistant',
    content: { type: 'text', text: `sampled by ${name}` },
    model: 'm',
  }));
  await client.connect(new StreamableHTTPClientTransport(to.url));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  [shared, perSession] = await Promise.all([startEverything('sse'), startEverything('sse')]);
  [gw, gwPerSession] = await Promise.all([
    startGateway(
      exampleConfig({ upstreams: [httpUpstream('legacy', shared.url, { transport: 'sse', timeoutMs: 20_000 })] }),
    ),
    startGateway(
      exampleConfig({
        upstreams: [httpUpstream('mine', perSession.url, { transport: 'sse', mode: 'per-session', timeoutMs: 20_000 })],
      }),
    ),
  ]);
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await Promise.all([gw?.stop(), gwPerSession?.stop()]);
  await Promise.all([shared?.stop(), perSession?.stop()]);
});

describe('legacy HTTP+SSE upstreams', () => {
  it('lists and calls tools of a shared legacy upstream', async () => {
    const client = await connect('a');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['legacy__echo', 'legacy__get-sum', 'legacy__trigger-long-running-operation']),
    );
    expect(toolText(await client.callTool({ name: 'legacy__echo', arguments: { message: 'over sse' } }))).toContain(
      'over sse',
    );
    expect(toolText(await client.callTool({ name: 'legacy__get-sum', arguments: { a: 2, b: 40 } }))).toContain('42');
  });

  it('streams progress that arrives on the legacy SSE stream', async () => {
    const client = await connect('b');
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'legacy__trigger-long-running-operation', arguments: { duration: 1, steps: 2 } },
      undefined,
      {
        onprogress: (p) => progress.push(p.progress),
      },
    );
    expect(toolText(result)).toMatch(/completed/i);
    expect(progress.length).toBe(2);
  });

  it('round-trips sampling from a per-session legacy upstream to the calling client', async () => {
    const client = await connect('carol', gwPerSession);
    const sampled = await client.callTool({
      name: 'mine__trigger-sampling-request',
      arguments: { prompt: 'hi', maxTokens: 5 },
    });
    expect(toolText(sampled)).toContain('sampled by carol');
  });

  it('a legacy server that goes away: calls fail with a typed error, and work again once it is back', async () => {
    const client = await connect('d');
    const port = shared.port;
    await shared.kill();
    let type: string | undefined;
    for (let i = 0; i < 100 && type === undefined; i++) {
      try {
        await client.callTool({ name: 'legacy__echo', arguments: { message: 'x' } });
        await new Promise((r) => setTimeout(r, 20));
      } catch (err) {
        type = (err as McpError).data ? ((err as McpError).data as { type: string }).type : String(err);
      }
    }
    expect(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_CIRCUIT_OPEN']).toContain(type);
    shared = await startEverything('sse', port);
    let echoed = '';
    for (let i = 0; i < 300 && !echoed; i++) {
      try {
        echoed = toolText(await client.callTool({ name: 'legacy__echo', arguments: { message: 'back' } }));
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    expect(echoed).toContain('back');
  });
});
