/**
 * A client that never answers what a per-session upstream asks it holds that worker no longer
 * than the call the question was for. server-everything's `trigger-elicitation-request` asks its
 * client for input and waits; the clients here never answer.
 *
 * 2025 sessions: each call ends UPSTREAM_TIMEOUT after the upstream's `timeoutMs`, its question is
 * withdrawn (the client hears notifications/cancelled), nothing is left asked, and with every
 * worker slot taken by those sessions another client's call still gets a worker.
 *
 * 2026-07-28 requests: each gets input_required and never retries. Its worker's call waits for
 * the retry (up to `stateless.inputTimeoutMs`, 5 minutes by default), but does not pin the
 * worker: at the cap, another client's call takes the least recently used one; that chain's late
 * retry gets a typed error, the others' retries still finish their calls.
 *
 * Real gateway, real server-everything processes, the official SDK client, HTTP over loopback.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { everythingUpstream } from '../support/everything.js';
import { statelessMeta, postStateless } from '../support/stateless.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const POOL_MAX = 3;
const TOOL = 'ev__trigger-elicitation-request';

interface PoolView {
  workers: number;
  inFlight: number;
  queued: number;
  clientRequests: number;
}

async function pool(gw: RunningGateway): Promise<PoolView> {
  const body = (await (await fetch(`${gw.base}/readyz`)).json()) as { upstreams: Record<string, PoolView> };
  return body.upstreams.ev!;
}

async function inputChains(gw: RunningGateway): Promise<number> {
  const text = await (await fetch(`${gw.base}/metrics`)).text();
  return Number(/^mcpgw_input_chains (\d+)$/m.exec(text)?.[1]);
}

/** A session whose client declares elicitation and never answers; `withdrawn` counts the questions the gateway took back. */
async function silentClient(gw: RunningGateway, name: string, withdrawn: { count: number }): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(
    ElicitRequestSchema,
    (_req, extra) =>
      new Promise((_resolve, reject) => {
        extra.signal.addEventListener('abort', () => {
          withdrawn.count++;
          reject(new Error('withdrawn'));
        });
      }),
  );
  await client.connect(new StreamableHTTPClientTransport(gw.url));
  return client;
}

async function errorType(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'no error';
  } catch (err) {
    return err instanceof McpError ? String((err.data as { type?: unknown } | undefined)?.type) : String(err);
  }
}

/** Another client's session, declaring nothing, calls echo: it needs a worker of its own. */
async function otherClientEchoes(gw: RunningGateway): Promise<string> {
  const other = new Client({ name: 'other', version: '1.0.0' });
  await other.connect(new StreamableHTTPClientTransport(gw.url));
  try {
    return toolText(await other.callTool({ name: 'ev__echo', arguments: { message: 'still served' } }));
  } finally {
    await other.close();
  }
}

describe('2025 sessions that never answer an elicitation', () => {
  let gw: RunningGateway;
  const clients: Client[] = [];

  beforeAll(async () => {
    gw = await startGateway(
      exampleConfig({
        upstreams: [
          everythingUpstream('ev', { mode: 'per-session', timeoutMs: 1500, pool: { max: POOL_MAX, spares: 0 } }),
        ],
      }),
    );
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.stop();
  });

  it('hold their workers only until their calls time out; then another client gets a worker', async () => {
    const withdrawn = { count: 0 };
    for (let i = 0; i < POOL_MAX; i++) clients.push(await silentClient(gw, `silent-${i}`, withdrawn));
    // A hang would show as the SDK's own 30 s timeout, not as the gateway's typed error.
    const outcomes = await Promise.all(
      clients.map((c) =>
        errorType(c.callTool({ name: TOOL, arguments: {} }, CallToolResultSchema, { timeout: 30_000 })),
      ),
    );
    expect(outcomes).toEqual(Array(POOL_MAX).fill('UPSTREAM_TIMEOUT'));

    // Every question was taken back from its client: nothing is left asked, every worker is free.
    await until('the questions withdrawn', async () => (await pool(gw)).clientRequests === 0);
    expect(await pool(gw)).toMatchObject({ workers: POOL_MAX, inFlight: 0, queued: 0, clientRequests: 0 });
    expect(withdrawn.count).toBe(POOL_MAX);

    // Every slot is taken by those sessions (they never leave): another client's call still gets one.
    expect(await otherClientEchoes(gw)).toBe('Echo: still served');
    expect(await pool(gw)).toMatchObject({ workers: POOL_MAX, inFlight: 0, clientRequests: 0 });
    expect(internals(gw.gateway.server).inFlight).toBe(0);
  }, 60_000);
});

describe('2026-07-28 requests that never retry after input_required', () => {
  let gw: RunningGateway;

  beforeAll(async () => {
    // inputTimeoutMs as shipped (5 minutes): what frees the worker must not be its expiry.
    gw = await startGateway(
      exampleConfig({
        upstreams: [everythingUpstream('ev', { mode: 'per-session', pool: { max: POOL_MAX, spares: 0 } })],
      }),
    );
  });

  afterAll(async () => {
    await gw?.stop();
  });

  const call = (id: number, extra: Record<string, unknown> = {}) =>
    postStateless(gw, id, 'tools/call', {
      name: TOOL,
      arguments: {},
      ...extra,
      _meta: statelessMeta({ elicitation: {} }),
    });

  it('do not pin their workers: another client takes the oldest, whose retry then fails typed; the others still finish', async () => {
    const rounds: Array<{ inputRequests: Record<string, unknown>; requestState: string }> = [];
    for (let i = 0; i < POOL_MAX; i++) {
      const r = await call(i + 1);
      expect(r.json.result?.resultType, r.text).toBe('input_required');
      rounds.push(r.json.result as { inputRequests: Record<string, unknown>; requestState: string });
    }
    expect(await inputChains(gw)).toBe(POOL_MAX);
    expect(await pool(gw)).toMatchObject({ workers: POOL_MAX, inFlight: POOL_MAX });

    expect(await otherClientEchoes(gw)).toBe('Echo: still served');

    const retry = (i: number, id: number) => {
      const [key] = Object.keys(rounds[i]!.inputRequests);
      return call(id, {
        inputResponses: { [key!]: { action: 'accept', content: { name: `late-${i}`, check: true } } },
        requestState: rounds[i]!.requestState,
      });
    };
    // The oldest made room: its retry is told its call is gone, in the error table's terms.
    const evicted = await retry(0, 10);
    expect(evicted.status).toBe(200);
    expect(evicted.json.error?.data?.type, evicted.text).toBe('REQUEST_CANCELLED');
    for (const i of [1, 2]) {
      const done = await retry(i, 10 + i);
      expect(done.json.result?.resultType, done.text).toBe('complete');
      expect(toolText(done.json.result)).toContain(`late-${i}`);
    }
    await until('every chain ended', async () => (await inputChains(gw)) === 0);
    await until('nothing in flight or asked', async () => {
      const p = await pool(gw);
      return p.inFlight === 0 && p.clientRequests === 0;
    });
  }, 60_000);
});
