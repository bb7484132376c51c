/**
 * A dual-era upstream whose server/discover names only 2026-07-28 (the conformance suite's
 * reference server, a FastMCP HTTP server) is learned as dual by an initialize beside discover:
 * /readyz says `era: dual`, a 2025 session keeps a 2025 session upstream (so the upstream's
 * classic server-to-client requests, elicitation and sampling, reach the client), a stateless
 * client's calls go the 2026 way. One that refuses initialize stays 2026-only. Upstreams:
 * in-process HTTP servers (test/support/dual-era-upstream.ts); clients: the official SDK v1 and
 * raw 2026 POSTs.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startDualEraUpstream, type DualEraUpstream } from '../support/dual-era-upstream.js';
import { postStateless } from '../support/stateless.js';
import { until } from '../support/wait.js';

let dual: DualEraUpstream;
let only2026: DualEraUpstream;
let slow: DualEraUpstream;
let gw: RunningGateway;
/** How long the slow upstream takes to answer initialize: past the gateway's wait for it (5 s). */
const SLOW_INITIALIZE_MS = 7000;

beforeAll(async () => {
  [dual, only2026, slow] = await Promise.all([
    startDualEraUpstream({ dual: true, listsSessionEra: false }),
    startDualEraUpstream(),
    startDualEraUpstream({ dual: true, listsSessionEra: false, initializeDelayMs: SLOW_INITIALIZE_MS }),
  ]);
  gw = await startGateway(
    resolveConfig(
      {
        listen: { host: '127.0.0.1', port: 0 },
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
        upstreams: [
          httpUpstream('dual', dual.url, { mode: 'per-session' }),
          httpUpstream('only', only2026.url, { mode: 'per-session' }),
          // Its initialize answer must come within its exchange timeout, after the gateway's wait.
          // No spare: a warm spare's 7 s initialize would be in flight when the last test looks.
          httpUpstream('slow', slow.url, { mode: 'per-session', timeoutMs: 15_000, pool: { max: 8, spares: 0 } }),
        ],
      },
      {},
    ),
  );
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([dual?.close(), only2026?.close(), slow?.close()]);
});

/** An SDK v1 client that declares elicitation and sampling, and answers both. */
async function v1Client(): Promise<Client> {
  const client = new Client({ name: 'dual-test', version: '1' }, { capabilities: { elicitation: {}, sampling: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { ok: true } }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'hi' },
    model: 'm',
  }));
  await client.connect(new StreamableHTTPClientTransport(gw.url));
  return client;
}

async function readyz(): Promise<Record<string, Record<string, unknown>>> {
  return ((await (await fetch(`${gw.base}/readyz`)).json()) as { upstreams: Record<string, Record<string, unknown>> })
    .upstreams;
}

describe('a dual-era upstream whose discover names only 2026-07-28', () => {
  it('/readyz: era dual, with the 2025 revision its initialize answered; a 2026-only one stays modern', async () => {
    const ups = await readyz();
    expect(ups.dual).toMatchObject({
      state: 'ready',
      era: 'dual',
      protocolVersion: '2026-07-28',
      sessionProtocolVersion: '2025-06-18',
    });
    expect(ups.only).toMatchObject({ state: 'ready', era: 'modern', protocolVersion: '2026-07-28' });
    expect(ups.only!.sessionProtocolVersion).toBeUndefined();
  });

  it("a 2025 session's elicitation and sampling tools reach the client over its own upstream session", async () => {
    const before = dual.seen.length;
    const client = await v1Client();
    try {
      expect(toolText(await client.callTool({ name: 'dual__confirm', arguments: {} }))).toBe(
        'elicitation/create: accept {"ok":true}',
      );
      expect(toolText(await client.callTool({ name: 'dual__sample', arguments: {} }))).toBe(
        'sampling/createMessage: hi',
      );
    } finally {
      await client.close();
    }
    const calls = dual.seen.slice(before).filter((s) => s.method === 'tools/call');
    expect(calls.map((c) => c.era)).toEqual(['2025', '2025']);
    expect(new Set(calls.map((c) => c.headers['mcp-session-id'])).size).toBe(1);
    expect(calls[0]!.headers['mcp-session-id']).toMatch(/^s\d+$/);
  });

  it("a stateless client's calls still go the 2026 way (no session, its _meta)", async () => {
    const before = dual.seen.length;
    const whoami = await postStateless(gw, 1, 'tools/call', { name: 'dual__whoami', arguments: {} });
    expect(toolText(whoami.json.result)).toMatch(/^2026: /);
    // The upstream's own answer to a classic server-to-client request on a stateless request.
    const confirm = await postStateless(gw, 2, 'tools/call', { name: 'dual__confirm', arguments: {} });
    expect(confirm.json.error).toMatchObject({ code: -32601 });
    const calls = dual.seen.slice(before).filter((s) => s.method === 'tools/call');
    expect(calls.map((c) => c.era)).toEqual(['2026', '2026']);
    expect(calls.every((c) => c.headers['mcp-session-id'] === undefined)).toBe(true);
  });

  it('one slow to answer initialize does not hold start-up: it serves as 2026-07-28, and is dual once it answers', async () => {
    const first = (await readyz()).slow!;
    // (Unless this machine is slow enough for its answer to have come already.)
    if (first.era === 'modern') expect(first.state).toBe('ready');
    await until(
      'the slow upstream to be learned as dual',
      async () => (await readyz()).slow?.era === 'dual',
      SLOW_INITIALIZE_MS + 10_000,
    );
    const client = await v1Client();
    try {
      expect(toolText(await client.callTool({ name: 'slow__confirm', arguments: {} }))).toBe(
        'elicitation/create: accept {"ok":true}',
      );
    } finally {
      await client.close();
    }
  }, 30_000);

  it('afterwards another client is served, and nothing is left held', async () => {
    const client = await v1Client();
    try {
      expect(toolText(await client.callTool({ name: 'only__whoami', arguments: {} }))).toMatch(/^2026: /);
    } finally {
      await client.close();
    }
    // Nothing held, once an earlier test's calls have settled. Polled, not read once after: the health
    // check of each upstream (a server/discover every health.intervalMs, on the same wire) counts as in
    // flight for a moment; seen on a loaded machine: the three upstreams 1 each in one read, 0 in the next.
    await untilNothingHeld(gw, 15_000);
  });
});
