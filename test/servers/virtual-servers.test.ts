/**
 * Virtual servers (`servers:`): a curated endpoint over server-everything, with a rename, a
 * description override, a fixed argument (gone from the schema, forced on the call) and a
 * default, seen by the official SDK client over real HTTP; the whole catalog stays on the main
 * path, and what a server does not select is unknown there.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, openSession, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { READER, connectClient, everythingUpstream } from '../support/everything.js';
import { statelessRequest } from '../support/stateless.js';

let gw: RunningGateway;
let reader: Client;
let whole: Client;

beforeAll(async () => {
  gw = await startGateway(exampleConfig({ upstreams: [everythingUpstream('ev')], servers: [READER] }));
  reader = (await connectClient(new URL('/mcp/reader', gw.base))).client;
  whole = (await connectClient(gw.url)).client;
});

afterAll(async () => {
  await reader?.close().catch(() => undefined);
  await whole?.close().catch(() => undefined);
  await gw?.stop();
});

describe('a curated virtual server', () => {
  it('lists only its selection, renamed and described as configured', async () => {
    const { tools } = await reader.listTools();
    expect(tools.map((t) => t.name)).toEqual(['say', 'add-ten']);
    const say = tools.find((t) => t.name === 'say')!;
    expect(say.description).toBe('Says the message back');
    const add = tools.find((t) => t.name === 'add-ten')!;
    expect(add.title).toBe('Adds ten');
    expect(add.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
  });

  it('hides a fixed argument from the schema and forces it on the call', async () => {
    const add = (await reader.listTools()).tools.find((t) => t.name === 'add-ten')!;
    expect(Object.keys(add.inputSchema.properties ?? {})).toEqual(['a']);
    expect(add.inputSchema.required).toEqual(['a']);
    expect(toolText(await reader.callTool({ name: 'add-ten', arguments: { a: 5 } }))).toBe(
      'The sum of 5 and 10 is 15.',
    );
    // A client that sends the fixed argument anyway does not get its value through.
    expect(toolText(await reader.callTool({ name: 'add-ten', arguments: { a: 5, b: 1000 } }))).toBe(
      'The sum of 5 and 10 is 15.',
    );
  });

  it('fills a default when the argument is absent, and not when it is given', async () => {
    expect(toolText(await reader.callTool({ name: 'say', arguments: {} }))).toBe('Echo: hello by default');
    expect(toolText(await reader.callTool({ name: 'say', arguments: { message: 'mine' } }))).toBe('Echo: mine');
  });

  it('refuses a tool outside its selection, and a renamed tool by its old name, as it refuses one that does not exist', async () => {
    const refusal = async (name: string) => {
      const err = await reader.callTool({ name, arguments: { a: 1, b: 2 } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      return { code: (err as McpError).code, message: (err as McpError).message };
    };
    const missing = await refusal('no-such-tool');
    expect(missing.code).toBe(-32602);
    expect(await refusal('ev__get-env')).toEqual({
      code: missing.code,
      message: missing.message.replace('no-such-tool', 'ev__get-env'),
    });
    expect((await refusal('ev__get-sum')).message).toContain('Unknown tool: ev__get-sum');
  });

  it('selects prompts and resources by glob', async () => {
    const { prompts } = await reader.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['ev__simple-prompt']);
    const { resources } = await reader.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['demo://resource/static/document/features.md']);
    const { resourceTemplates } = await reader.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['demo://resource/dynamic/text/{resourceId}']);
    expect(
      (await reader.readResource({ uri: 'demo://resource/static/document/features.md' })).contents[0],
    ).toMatchObject({ uri: 'demo://resource/static/document/features.md' });
    expect((await reader.readResource({ uri: 'demo://resource/dynamic/text/7' })).contents[0]).toMatchObject({
      uri: 'demo://resource/dynamic/text/7',
    });
    // Served on the main path, unknown here.
    expect((await whole.readResource({ uri: 'demo://resource/static/document/startup.md' })).contents).toHaveLength(1);
    await expect(reader.readResource({ uri: 'demo://resource/static/document/startup.md' })).rejects.toThrow(
      /Resource not found/,
    );
    await expect(reader.getPrompt({ name: 'ev__args-prompt', arguments: { city: 'x' } })).rejects.toThrow(
      /Unknown prompt/,
    );
  });

  it('leaves the main path the whole catalog, unchanged', async () => {
    const names = (await whole.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['ev__echo', 'ev__get-sum', 'ev__get-env']));
    expect(names).not.toContain('say');
    expect(toolText(await whole.callTool({ name: 'ev__get-sum', arguments: { a: 1, b: 2 } }))).toBe(
      'The sum of 1 and 2 is 3.',
    );
  });

  it('binds a session to the server it was opened on', async () => {
    const sid = await openSession(new URL('/mcp/reader', gw.base));
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    expect((await post(new URL('/mcp/reader', gw.base), list, headers)).status).toBe(200);
    const elsewhere = await post(gw.url, list, headers);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.json.error.data.type).toBe('SESSION_NOT_FOUND');
    const mainSid = await openSession(gw.url);
    expect((await post(new URL('/mcp/reader', gw.base), list, { ...headers, 'mcp-session-id': mainSid })).status).toBe(
      404,
    );
  });

  it('serves 2026-07-28 stateless requests through the same view', async () => {
    const at = new URL('/mcp/reader', gw.base);
    const modern = (id: number, method: string, params?: Record<string, unknown>) => {
      const { body, headers } = statelessRequest(id, method, params);
      return post(at, body, headers);
    };
    const listed = await modern(1, 'tools/list');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['say', 'add-ten']);
    const called = await modern(2, 'tools/call', { name: 'add-ten', arguments: { a: 1 } });
    expect(called.status, called.text).toBe(200);
    expect(toolText(called.json.result)).toBe('The sum of 1 and 10 is 11.');
    const refused = await modern(3, 'tools/call', { name: 'ev__get-env', arguments: {} });
    expect(refused.json.error).toMatchObject({ code: -32602, message: 'Unknown tool: ev__get-env' });
  });
});
