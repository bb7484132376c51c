/**
 * call_tool is a direct tools/call (issue 30), through the official SDK v1 client (a 2025
 * session) and the v2 client pinned to 2026-07-28: a tool found by search_tools that elicits
 * (server-everything's trigger-elicitation-request, per session) asks this client, whose handler
 * answers, and the call completes; a per-user upstream (token exchange) is called as the caller;
 * the audit line and the call metrics name the real tool, not call_tool. A real gateway on
 * loopback with its log read, a JWT issuer, an authorization server and a per-user upstream.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { everythingUpstream } from '../support/everything.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startPerUserUpstream, tokenExchange } from '../support/per-user-upstream.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/authorization-server.js';
import { startJwtIssuer, TEST_ISSUER, type JwtIssuer } from '../support/jwt-issuer.js';
import { capturingLogger } from '../support/log-lines.js';

const ELICITING = 'ev__trigger-elicitation-request';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let upstream: Server;
let gw: RunningGateway;
const lines: Array<Record<string, unknown>> = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  [as, issuer] = await Promise.all([startAuthorizationServer(), startJwtIssuer()]);
  upstream = await startPerUserUpstream(as);
  const oauth = tokenExchange(as, 'urn:private');
  const config = exampleConfig({
    logLevel: 'warn',
    auth: issuer.authConfig,
    audit: { methods: ['tools/call'] },
    upstreams: [
      everythingUpstream('ev', { mode: 'per-session', pool: { max: 4 } }),
      httpUpstream('private', `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`, {
        mode: 'per-session',
        oauth,
      }),
    ],
    toolSearch: { enabled: true },
  });
  const log = capturingLogger('warn', lines);
  gw = await startGateway(config, { logger: log });
}, 30_000);

afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await gw?.stop();
  await Promise.all([as?.close(), issuer?.close(), new Promise((r) => upstream?.close(r))]);
});

async function v1(sub: string): Promise<Client> {
  const headers = await issuer.bearer(sub);
  const client = new Client({ name: `v1-${sub}`, version: '1' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { name: `${sub} answered`, check: true },
  }));
  await client.connect(new StreamableHTTPClientTransport(gw.url, { requestInit: { headers } }));
  closers.push(() => client.close());
  return client;
}

async function v2(sub: string): Promise<ClientV2> {
  const headers = await issuer.bearer(sub);
  const client = new ClientV2(
    { name: `v2-${sub}`, version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept' as const,
    content: { name: `${sub} answered`, check: true },
  }));
  await client.connect(new TransportV2(gw.url, { requestInit: { headers } }));
  closers.push(() => client.close());
  return client;
}

type Caller = Pick<Client, 'callTool'> | Pick<ClientV2, 'callTool'>;

async function found(client: Caller, query: string): Promise<string[]> {
  const result = await (client as Client).callTool({ name: 'search_tools', arguments: { query } });
  return (result.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
}

const through = (client: Caller, name: string, args: Record<string, unknown> = {}) =>
  (client as Client).callTool({ name: 'call_tool', arguments: { name, arguments: args } });

/** The audit lines of tools/call from `from` on. */
const audited = (from: number) =>
  lines
    .slice(from)
    .filter((l) => l.component === 'audit' && (l.audit as { method?: string } | undefined)?.method === 'tools/call')
    .map((l) => l.audit as Record<string, unknown>);

/** How many tools/call the operation histogram counted per tool name now. */
async function callCounts(): Promise<Map<string, number>> {
  const text = await (await fetch(new URL('/metrics', gw.base))).text();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('mcp_server_operation_duration_seconds_count{')) continue;
    if (!line.includes('mcp_method_name="tools/call"')) continue;
    const tool = /gen_ai_tool_name="([^"]*)"/.exec(line)![1]!;
    counts.set(tool, (counts.get(tool) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

function grown(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [tool, n] of after) if (n !== (before.get(tool) ?? 0)) out[tool] = n - (before.get(tool) ?? 0);
  return out;
}

for (const [era, connect] of [
  ['SDK v1, a 2025 session', v1],
  ['SDK v2 at 2026-07-28', v2],
] as const) {
  describe(`call_tool as a direct tools/call: ${era}`, () => {
    it("search finds the eliciting tool; call_tool's elicitation reaches this client's handler and the call completes", async () => {
      const client = await connect('alice');
      expect((await found(client, 'elicitation request from the server'))[0]).toBe(ELICITING);
      /** The call's text, its audit lines and what it added to the call metrics. */
      const traced = async (call: () => Promise<unknown>) => {
        const before = await callCounts();
        const from = lines.length;
        const result = (await call()) as { isError?: boolean };
        expect(result.isError).toBeFalsy();
        const trail = audited(from).map(({ durationMs: _ms, session: _s, ...rest }) => rest);
        return { text: toolText(result), trail, counted: grown(before, await callCounts()) };
      };
      const direct = await traced(() => (client as Client).callTool({ name: ELICITING, arguments: {} }));
      const via = await traced(() => through(client, ELICITING));
      expect(via.text).toContain('alice answered');
      expect(via.text).toBe(direct.text);
      // The real tool's name on every audit line and in the metrics; call_tool on none.
      expect(via.trail).toEqual(direct.trail);
      expect(via.trail.length).toBeGreaterThan(0);
      for (const line of via.trail)
        expect(line).toMatchObject({ target: ELICITING, principal: `${TEST_ISSUER} alice`, outcome: 'ok' });
      expect(via.counted).toEqual(direct.counted);
      expect(Object.keys(via.counted)).toEqual([ELICITING]);
    });

    it('a per-user upstream is found and called as the caller, through call_tool as directly', async () => {
      // Each user's own upstream session (a stateless request's lasts that request): the user is what must match.
      for (const sub of ['bob', 'carol']) {
        const client = await connect(sub);
        // No tools/list first: the search opens the per-user upstream as a list would.
        expect(await found(client, 'whoami')).toContain('private__whoami');
        const mine = new RegExp(`^you are ${sub} in s\\d+-${sub}$`);
        expect(toolText(await (client as Client).callTool({ name: 'private__whoami', arguments: {} }))).toMatch(mine);
        expect(toolText(await through(client, 'private__whoami'))).toMatch(mine);
      }
    });
  });
}
