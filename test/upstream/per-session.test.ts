/**
 * mode: per-session — each client session gets its own upstream process, initialized with the
 * client's own capabilities, so server-to-client requests (sampling, elicitation, roots) and
 * subscriptions reach that client and no other. Upstreams: the official server-everything and
 * our echo example, both as real stdio processes; clients: the official SDK.
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  exampleConfig,
  isAlive,
  startGateway,
  stdioUpstream,
  toolText,
  type RunningGateway,
} from '../support/gateway.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

let gw: RunningGateway;
const clients: Client[] = [];

async function connect(
  name: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; updates: string[] }> {
  const client = new Client(
    { name, version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  const updates: string[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    role: 'assistant',
    content: { type: 'text', text: `${name} sampled: ${JSON.stringify(req.params.messages[0]?.content)}` },
    model: `model-of-${name}`,
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { name: `${name}-user`, check: true },
  }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: `file:///roots/${name}`, name }] }));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  const transport = new StreamableHTTPClientTransport(gw.url);
  await client.connect(transport);
  clients.push(client);
  return { client, transport, updates };
}

async function pidOf(client: Client): Promise<number> {
  return (JSON.parse(toolText(await client.callTool({ name: 'echo__whoami', arguments: {} }))) as { pid: number }).pid;
}

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('everything', EVERYTHING, { args: [EVERYTHING, 'stdio'], mode: 'per-session', pool: { max: 8 } }),
        stdioUpstream('echo', ECHO_SERVER, { mode: 'per-session', pool: { max: 8 } }),
      ],
    }),
  );
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gw?.stop();
});

describe('per-session upstreams', () => {
  it('offers the tools that need client capabilities (the probe declared them)', async () => {
    const { client } = await connect('lister');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'everything__trigger-sampling-request',
        'everything__trigger-elicitation-request',
        'everything__get-roots-list',
        'echo__whoami',
      ]),
    );
  });

  it('round-trips sampling, elicitation and roots to the client that made the call', async () => {
    const { client } = await connect('alice');
    const sampled = await client.callTool({
      name: 'everything__trigger-sampling-request',
      arguments: { prompt: 'hi there', maxTokens: 10 },
    });
    expect(toolText(sampled)).toContain('alice sampled:');
    expect(toolText(sampled)).toContain('model-of-alice');

    const elicited = await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} });
    expect(toolText(elicited)).toContain('alice-user');

    const roots = await client.callTool({ name: 'everything__get-roots-list', arguments: {} });
    expect(toolText(roots)).toContain('file:///roots/alice');
  });

  it('gives two sessions separate processes; deleting one ends its process only', async () => {
    const a = await connect('a');
    const b = await connect('b');
    const pidA = await pidOf(a.client);
    const pidB = await pidOf(b.client);
    expect(pidA).not.toBe(pidB);
    expect(await pidOf(a.client)).toBe(pidA); // the same session keeps its worker

    await a.transport.terminateSession();
    for (let i = 0; i < 100 && isAlive(pidA); i++) await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(pidA)).toBe(false);
    expect(isAlive(pidB)).toBe(true);
    expect(await pidOf(b.client)).toBe(pidB);
  });

  it('delivers resources/updated to the subscribing session and to no other', async () => {
    const sub = await connect('subscriber');
    const other = await connect('bystander');
    const { resources } = await sub.client.listResources();
    const uri = resources.find((r) => !r.uri.startsWith('echo://'))!.uri;
    await sub.client.subscribeResource({ uri });
    // Both sessions start simulated updates on their own workers; only one subscribed.
    await sub.client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
    await other.client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
    for (let i = 0; i < 160 && sub.updates.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(sub.updates).toContain(uri);
    expect(other.updates).toEqual([]);
  });
});
