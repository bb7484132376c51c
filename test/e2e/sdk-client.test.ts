/**
 * The official SDK client against the gateway fronting two real stdio upstreams: the whole
 * flow a 2025-era agent goes through, over real HTTP on loopback.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { internals } from '../../src/gateway/internals.js';

let gw: RunningGateway;
let client: Client;
let transport: StreamableHTTPClientTransport;

beforeAll(async () => {
  gw = await startGateway();
  client = new Client({ name: 'e2e', version: '1.0.0' });
  transport = new StreamableHTTPClientTransport(gw.url);
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.stop();
});

describe('SDK client through the gateway', () => {
  it('negotiates the latest version and sees the gateway identity', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'mcp-gateway' });
    expect(transport.sessionId).toMatch(/^[\x21-\x7e]+$/);
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, prompts: {}, resources: {} });
  });

  it('lists the merged, prefixed tools of both upstreams in a deterministic order', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual([
      'echo__echo',
      'echo__add',
      'echo__whoami',
      'slow__sleep',
      'slow__crash',
      'slow__hang',
      'slow__pid',
      'slow__fail',
    ]);
    const again = await client.listTools();
    expect(again.tools.map((t) => t.name)).toEqual(names);
  });

  it('calls a tool of each upstream', async () => {
    const echoed = await client.callTool({ name: 'echo__echo', arguments: { text: 'hello gateway' } });
    expect(toolText(echoed)).toBe('hello gateway');
    const slept = await client.callTool({ name: 'slow__sleep', arguments: { ms: 10, steps: 0 } });
    expect(toolText(slept)).toBe('slept 10ms');
  });

  it('passes tool execution failures through as results with isError', async () => {
    const failed = await client.callTool({ name: 'slow__fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(toolText(failed)).toBe('tool failed on purpose');
  });

  it('streams progress notifications for a slow tool before the result', async () => {
    const progress: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool({ name: 'slow__sleep', arguments: { ms: 200, steps: 4 } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(toolText(result)).toBe('slept 200ms');
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
    expect(progress.every((p) => p.total === 4)).toBe(true);
  });

  it('routes prompts and resources to the upstream that offers them', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('echo__greeting');
    const prompt = await client.getPrompt({ name: 'echo__greeting', arguments: { name: 'Ada' } });
    expect(JSON.stringify(prompt.messages)).toContain('Hello, Ada!');
    const read = await client.readResource({ uri: 'echo://readme' });
    expect(read.contents[0]).toMatchObject({ uri: 'echo://readme', text: 'echo server readme' });
    const templated = await client.readResource({ uri: 'echo://items/42' });
    expect(templated.contents[0]).toMatchObject({ text: 'item 42' });
  });

  it('cancels an in-flight call and keeps the session usable', async () => {
    const controller = new AbortController();
    const pending = client.callTool({ name: 'slow__sleep', arguments: { ms: 5000, steps: 50 } }, undefined, {
      signal: controller.signal,
      onprogress: () => undefined,
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(internals(gw.gateway.server).inFlight).toBe(1);
    controller.abort('user changed their mind');
    await expect(pending).rejects.toThrow();
    // The gateway forwarded the cancellation: nothing stays in flight on the upstream.
    for (let i = 0; i < 50 && internals(gw.gateway.server).inFlight > 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(internals(gw.gateway.server).inFlight).toBe(0);
    const after = await client.callTool({ name: 'echo__add', arguments: { a: 2, b: 40 } });
    expect(toolText(after)).toBe('42');
  });

  it('answers an unknown tool with a JSON-RPC error', async () => {
    const err = await client.callTool({ name: 'echo__nope', arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
  });

  it('pings', async () => {
    await expect(client.ping()).resolves.toEqual({});
  });

  it('terminates the session: later use of its id gets 404', async () => {
    const sid = transport.sessionId!;
    await transport.terminateSession();
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001 } });
  });
});
