/**
 * tools.allow / tools.deny of an upstream: what the gateway offers of its tools. The rules are
 * checked on their own, then through a real gateway: a left-out tool is neither listed nor
 * callable, by 2025 sessions and stateless requests alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFilter } from '../../src/config/tool-filter.js';
import {
  ECHO_SERVER,
  SLOW_SERVER,
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { postStateless } from '../support/stateless.js';

describe('toolFilter', () => {
  it('offers everything without rules', () => {
    expect(toolFilter(undefined)('anything')).toBe(true);
  });

  it('allow lists what is offered; * matches any run of characters; other characters are literal', () => {
    const offers = toolFilter({ allow: ['read_*', 'status'] });
    expect(['read_file', 'read_', 'status'].map(offers)).toEqual([true, true, true]);
    expect(['write_file', 'statuses', 'xread_file'].map(offers)).toEqual([false, false, false]);
    expect(toolFilter({ allow: ['a.b'] })('axb')).toBe(false);
  });

  it('deny wins over allow', () => {
    const offers = toolFilter({ allow: ['*'], deny: ['delete_*'] });
    expect(offers('delete_all')).toBe(false);
    expect(offers('list')).toBe(true);
  });
});

describe('through the gateway', () => {
  let gw: RunningGateway;

  beforeAll(async () => {
    gw = await startGateway(
      exampleConfig({
        upstreams: [
          stdioUpstream('echo', ECHO_SERVER, { tools: { deny: ['add'] } }),
          stdioUpstream('slow', SLOW_SERVER, { tools: { allow: ['s*', 'pid'] } }),
        ],
      }),
    );
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('lists only what the rules offer, and a left-out tool is an unknown tool', async () => {
    const sid = await openSession(gw.url);
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const list = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual([
      'echo__echo',
      'echo__whoami',
      'slow__sleep',
      'slow__pid',
    ]);
    const denied = await post(
      gw.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo__add', arguments: { a: 1, b: 2 } } },
      headers,
    );
    expect(denied.json.error).toMatchObject({ code: -32602, data: { type: 'INVALID_PARAMS' } });
    const crash = await post(
      gw.url,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'slow__crash', arguments: {} } },
      headers,
    );
    expect(crash.json.error).toMatchObject({ code: -32602 });
    const ok = await post(
      gw.url,
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'slow__pid', arguments: {} } },
      headers,
    );
    expect(ok.json.result.content[0].text).toMatch(/pid/);
  });

  it('stateless requests see the same', async () => {
    const r = await postStateless(gw, 5, 'tools/call', { name: 'echo__add', arguments: { a: 1, b: 2 } });
    expect(r.json.error).toMatchObject({ code: -32602 });
  });
});
