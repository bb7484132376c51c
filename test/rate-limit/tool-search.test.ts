/**
 * Rate limits and tool search together: a `call_tool` counts as the tool it runs (its re-entered
 * tools/call passes the rate-limit wrapper under the real name), so a rule on that tool holds
 * whichever way it is called; `call_tool` itself and `search_tools` are no tool of a rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, openSession, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';

let gw: RunningGateway;

beforeAll(async () => {
  const rules = [{ name: 'echoes', match: { tools: ['echo__echo'] }, key: 'tool', limit: 3, windowMs: 60_000 }];
  gw = await startGateway(exampleConfig({ toolSearch: { enabled: true }, rateLimits: { rules } }));
});

afterAll(async () => {
  await gw?.stop();
});

const call = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('rate limits with tool search', () => {
  it('counts call_tool as the tool it runs, sharing the direct calls’ counter', async () => {
    const sid = await openSession(gw.url);
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const through = (id: number) => call(id, 'call_tool', { name: 'echo__echo', arguments: { text: `t${id}` } });
    for (const id of [1, 2]) {
      const res = await post(gw.url, through(id), headers);
      expect(toolText(res.json.result)).toBe(`t${id}`);
    }
    expect((await post(gw.url, call(3, 'echo__echo', { text: 'direct' }), headers)).json.result).toBeDefined();
    // The fourth call of the tool, either way: refused by the tool's rule, by name.
    for (const body of [through(4), call(5, 'echo__echo', { text: 'direct' })]) {
      const refused = await post(gw.url, body, headers);
      expect(refused.status).toBe(429);
      expect(refused.json.error).toMatchObject({ data: { type: 'RATE_LIMITED', rule: 'echoes' } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // Searching is not a call of the tool, nor is another tool through call_tool.
    const found = await post(gw.url, call(6, 'search_tools', { query: 'echo text back' }), headers);
    expect(found.json.result.structuredContent.tools.map((t: { name: string }) => t.name)).toContain('echo__echo');
    const other = await post(gw.url, call(7, 'call_tool', { name: 'echo__add', arguments: { a: 1, b: 2 } }), headers);
    expect(other.json.result).toBeDefined();
  }, 30_000);
});
