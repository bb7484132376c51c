/**
 * auth.mode api-key with two teams, each with a virtual server of its own: keys known to the
 * config only by their sha256, sent as bearer tokens; the key's name is the principal, which a
 * server's `principals` admit and sessions are bound to.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import { exampleConfig, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { connectClient } from '../support/everything.js';
import { statelessRequest } from '../support/stateless.js';

const ALPHA_KEY = 'alpha-0f6c1e2b9d8a4c7e';
const BETA_KEY = 'beta-3a9d7c1e5b2f8e4d';
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let gw: RunningGateway;
const clients: Client[] = [];
const at = (path: string) => new URL(path, gw.base);

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      auth: {
        mode: 'api-key',
        apiKeys: [
          { name: 'team-alpha', sha256: sha256(ALPHA_KEY) },
          { name: 'team-beta', sha256: sha256(BETA_KEY).toUpperCase() },
        ],
      },
      servers: [
        { name: 'alpha', path: '/mcp/alpha', tools: ['echo__*'], principals: ['team-alpha'] },
        { name: 'beta', path: '/mcp/beta', tools: ['slow__*'], principals: ['team-beta'] },
        { name: 'both', path: '/mcp/both', tools: ['echo__echo'], principals: ['team-alpha', 'team-beta'] },
      ],
    }),
  );
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gw?.stop();
});

async function openWith(path: string, key: string): Promise<string> {
  const res = await post(at(path), INIT, bearer(key));
  expect(res.status, res.text).toBe(200);
  return res.headers.get('mcp-session-id')!;
}

describe('API keys', () => {
  it('lets each team reach its own server with the SDK client', async () => {
    const alpha = (await connectClient(at('/mcp/alpha'), ALPHA_KEY)).client;
    const beta = (await connectClient(at('/mcp/beta'), BETA_KEY)).client;
    clients.push(alpha, beta);
    expect((await alpha.listTools()).tools.map((t) => t.name)).toEqual(['echo__echo', 'echo__add', 'echo__whoami']);
    expect((await beta.listTools()).tools.every((t) => t.name.startsWith('slow__'))).toBe(true);
    expect(toolText(await alpha.callTool({ name: 'echo__echo', arguments: { text: 'alpha here' } }))).toBe(
      'alpha here',
    );
  });

  it('answers a request without a key, or with a wrong one, 401 with a WWW-Authenticate challenge', async () => {
    for (const headers of [{}, bearer('not-a-key'), bearer(`${ALPHA_KEY}x`), { authorization: `Basic ${ALPHA_KEY}` }]) {
      for (const path of ['/mcp', '/mcp/alpha']) {
        const res = await post(at(path), INIT, headers);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="mcp-gateway"/);
        expect(res.json.error.data.type).toBe('UNAUTHORIZED');
      }
    }
    expect((await post(at('/mcp'), INIT, bearer('not-a-key'))).headers.get('www-authenticate')).toContain(
      'error="invalid_token"',
    );
  });

  it("refuses a team on another team's server with 403, whatever the request", async () => {
    for (const body of [INIT, LIST]) {
      const res = await post(at('/mcp/beta'), body, bearer(ALPHA_KEY));
      expect(res.status).toBe(403);
      expect(res.json.error.data.type).toBe('SERVER_FORBIDDEN');
      expect(res.json.error.message).toContain('team-alpha');
    }
    expect((await post(at('/mcp/alpha'), INIT, bearer(BETA_KEY))).status).toBe(403);
    // A server both may use, and the main endpoint (no principals), admit either.
    expect((await post(at('/mcp/both'), INIT, bearer(BETA_KEY))).status).toBe(200);
    expect((await post(at('/mcp'), INIT, bearer(BETA_KEY))).status).toBe(200);
  });

  it("answers another key's session id 404, as if it did not exist", async () => {
    for (const path of ['/mcp', '/mcp/both']) {
      const sid = await openWith(path, ALPHA_KEY);
      const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
      const own = await post(at(path), LIST, { ...headers, ...bearer(ALPHA_KEY) });
      expect(own.status, own.text).toBe(200);
      const hijack = await post(at(path), LIST, { ...headers, ...bearer(BETA_KEY) });
      expect(hijack.status).toBe(404);
      expect(hijack.json.error.data.type).toBe('SESSION_NOT_FOUND');
      // Still the owner's.
      expect((await post(at(path), LIST, { ...headers, ...bearer(ALPHA_KEY) })).status).toBe(200);
    }
  });
});

describe('auth.toolScopes on a virtual server', () => {
  // echo's tools only, for a key with no scope of its own: slow__* needs mcp:slow, echo__add mcp:add.
  const KEY = 'plain-5e1d0c9b7a3f2e8d';
  let sgw: RunningGateway;
  const atS = (path: string) => new URL(path, sgw.base);
  beforeAll(async () => {
    sgw = await startGateway(
      exampleConfig({
        auth: {
          mode: 'api-key',
          apiKeys: [{ name: 'plain', sha256: sha256(KEY) }],
          toolScopes: [
            { tools: ['slow__*'], scopes: ['mcp:slow'] },
            { tools: ['echo__add'], scopes: ['mcp:add'] },
          ],
        },
        servers: [{ path: '/mcp/echoes', tools: ['echo__*'] }],
      }),
    );
  });
  afterAll(async () => {
    await sgw?.stop();
  });

  const callOn = async (path: string, name: string) => {
    const res = await post(atS(path), INIT, bearer(KEY));
    const headers = {
      ...bearer(KEY),
      'mcp-session-id': res.headers.get('mcp-session-id')!,
      'mcp-protocol-version': '2025-06-18',
    };
    return post(
      atS(path),
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: { text: 'x', a: 1, b: 2, ms: 1 } } },
      headers,
    );
  };

  it('a tool the server does not select answers Unknown tool, as one that does not exist, naming no scope', async () => {
    const unknown = await callOn('/mcp/echoes', 'no-such-tool');
    expect(unknown.status).toBe(200);
    expect(unknown.json.error).toEqual({
      code: -32602,
      message: 'Unknown tool: no-such-tool',
      data: { type: 'INVALID_PARAMS' },
    });
    for (const name of ['slow__sleep', 'slow__nothing']) {
      const r = await callOn('/mcp/echoes', name);
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('www-authenticate')).toBeNull();
      expect(r.json.error).toEqual({
        code: -32602,
        message: `Unknown tool: ${name}`,
        data: { type: 'INVALID_PARAMS' },
      });
      expect(r.text).not.toContain('mcp:slow');
    }
    // 2026-07-28 requests come through the same check.
    const { body, headers } = statelessRequest(8, 'tools/call', { name: 'slow__sleep', arguments: { ms: 1 } });
    const modern = await post(atS('/mcp/echoes'), body, { ...headers, ...bearer(KEY) });
    expect(modern.status, modern.text).toBe(200);
    expect(modern.json.error).toEqual({
      code: -32602,
      message: 'Unknown tool: slow__sleep',
      data: { type: 'INVALID_PARAMS' },
    });
  });

  it('a tool it offers, or the main endpoint offers, still needs its scope: 403 naming it', async () => {
    for (const [path, name, scope] of [
      ['/mcp/echoes', 'echo__add', 'mcp:add'],
      ['/mcp', 'slow__sleep', 'mcp:slow'],
      ['/mcp', 'echo__add', 'mcp:add'],
    ]) {
      const r = await callOn(path!, name!);
      expect(r.status).toBe(403);
      expect(r.headers.get('www-authenticate')).toContain(`scope="${scope}"`);
      expect(r.json.error).toMatchObject({ code: -32013, data: { type: 'INSUFFICIENT_SCOPE' } });
    }
    // And what the key may call goes through, with nothing left in flight.
    expect((await callOn('/mcp/echoes', 'echo__echo')).json.result.content[0].text).toBe('x');
    const ready = (await (await fetch(atS('/readyz'))).json()) as { upstreams: Record<string, { inFlight: number }> };
    expect(Object.values(ready.upstreams).map((u) => u.inFlight)).toEqual([0, 0]);
  });
});

describe('api-key configuration', () => {
  const base = { upstreams: [{ name: 'x', transport: 'stdio', command: 'node' }] };
  const problems = (source: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => {
    try {
      resolveConfig({ ...base, ...source }, env);
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  it('expands ${VAR} in a key hash', () => {
    const config = resolveConfig(
      { ...base, auth: { mode: 'api-key', apiKeys: [{ name: 'ci', sha256: '${CI_KEY_SHA256}' }] } },
      { CI_KEY_SHA256: sha256('k').toUpperCase() },
    );
    expect(config.auth.apiKeys[0]!.sha256).toBe(sha256('k'));
  });

  it('names every bad key entry', () => {
    expect(problems({ auth: { mode: 'api-key' } })).toEqual([
      expect.stringContaining('auth.apiKeys: name at least one key'),
    ]);
    expect(problems({ auth: { mode: 'api-key', apiKeys: [{ name: 'ci', sha256: '${MISSING}' }] } })).toEqual([
      'auth.apiKeys[0].sha256: environment variable MISSING is not set',
      expect.stringContaining('auth.apiKeys[0].sha256: must be the hex sha256 of the key'),
    ]);
    expect(problems({ auth: { mode: 'api-key', apiKeys: [{ name: 'ci', sha256: 'secret-in-plain-text' }] } })).toEqual([
      expect.stringContaining('auth.apiKeys[0].sha256: must be the hex sha256 of the key'),
    ]);
    const twice = problems({
      auth: {
        mode: 'api-key',
        apiKeys: [
          { name: 'a', sha256: sha256('k') },
          { name: 'a', sha256: sha256('k') },
        ],
      },
    });
    expect(twice).toEqual([
      'auth.apiKeys[1].name: "a" is already used by auth.apiKeys[0]',
      'auth.apiKeys[1].sha256: is the same key as auth.apiKeys[0]',
    ]);
  });

  it('refuses principals on a server when nothing authenticates', () => {
    expect(problems({ servers: [{ path: '/mcp/a', principals: ['x'] }] })).toEqual([
      expect.stringContaining('servers[0]: principals and requiredScopes need auth.mode'),
    ]);
  });
});
