/**
 * Per-session eviction never strands a call. More client sessions than `pool.max` (clients
 * that never DELETE, like the conformance suite's), each calling a tool that makes the upstream
 * ask its client something (sampling, elicitation): the least recently used idle worker makes
 * room, and a worker busy with a call (one waiting for its client's answer too) is never taken.
 * Every call completes or fails with a typed error from the gateway's table, none hangs (a
 * 15 s abort per call detects a hang; it is not a speed limit), and afterwards the pool holds
 * nothing in flight, queued or asked, and a new session's call succeeds. And a worker that
 * goes (it crashed, its session ended) ends its requests to the client at once, as does a call
 * that ends (the question was for it) and an upstream that withdraws its question
 * (notifications/cancelled).
 *
 * The conformance fixture runs as a stdio child process and behind its own Streamable HTTP
 * server (examples/conformance/http.mjs); the clients are the official SDK's.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/jsonrpc/errors.js';
import { exampleConfig, startGateway, stdioUpstream, toolText, type RunningGateway } from '../support/gateway.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';
import { childPidsRunning } from '../support/child-processes.js';
import {
  CONFORMANCE_SERVER,
  httpUpstream,
  startConformanceHttp,
  type HttpServerProcess,
} from '../support/http-upstream.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const SESSIONS = 12;
const POOL_MAX = 3;
/** Sessions running at once: more than the pool holds, so arrivals both evict and find it full. */
const CONCURRENCY = 4;
const HANG_MS = 15_000;

type Outcome =
  | { kind: 'ok'; text: string }
  | { kind: 'typed'; type: string }
  | { kind: 'untyped'; message: string }
  | { kind: 'hang'; tool: string };

const GATEWAY_CODES = new Set<number>(Object.values(ERRORS).map((e) => e.code));

interface Gate {
  /** Resolves when the upstream's request reached the client. */
  asked: Promise<void>;
  /** Lets the client answer. */
  open(): void;
}

interface TestClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

/**
 * A client that declares sampling and elicitation. By default it answers after a short think
 * (so other sessions arrive meanwhile); with `gate`, it answers sampling only when told.
 */
async function connect(
  url: URL,
  name: string,
  gate?: Gate & { reached: () => void; wait: Promise<void> },
): Promise<TestClient> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
  const think = () => new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 150)));
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    if (gate) {
      gate.reached();
      await gate.wait;
    } else await think();
    return { role: 'assistant', content: { type: 'text', text: `sampled for ${name}` }, model: 'test-model' };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    await think();
    return { action: 'accept', content: { username: name, email: `${name}@example.test` } };
  });
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  return { client, transport };
}

function gate(): Gate & { reached: () => void; wait: Promise<void> } {
  let reached!: () => void;
  let open!: () => void;
  const asked = new Promise<void>((r) => (reached = r));
  const wait = new Promise<void>((r) => (open = r));
  return { asked, reached, wait, open };
}

async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  signal = AbortSignal.timeout(HANG_MS),
): Promise<Outcome> {
  try {
    const result = await client.callTool({ name, arguments: args }, CallToolResultSchema, {
      signal,
      timeout: HANG_MS * 2,
    });
    return { kind: 'ok', text: toolText(result) };
  } catch (err) {
    if (signal.aborted) return { kind: 'hang', tool: name };
    const data = err instanceof McpError ? (err.data as { type?: unknown } | undefined) : undefined;
    if (err instanceof McpError && GATEWAY_CODES.has(err.code) && typeof data?.type === 'string')
      return { kind: 'typed', type: data.type };
    return { kind: 'untyped', message: err instanceof Error ? err.message : String(err) };
  }
}

/** One client as the conformance suite runs it: connect, ask, ask again, leave without DELETE. */
async function oneSession(url: URL, i: number): Promise<Outcome[]> {
  const { client } = await connect(url, `client-${i}`);
  try {
    return [
      await callTool(client, 'test_sampling', { prompt: `prompt ${i}` }),
      await callTool(client, 'test_elicitation_sep1034_defaults', {}),
    ];
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function runSessions(url: URL): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let next = 0;
  const lane = async () => {
    while (next < SESSIONS) outcomes.push(...(await oneSession(url, next++)));
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return outcomes;
}

interface PoolView {
  inFlight: number;
  queued: number;
  workers: number;
  clientRequests: number;
}

async function pool(base: string): Promise<PoolView> {
  const body = (await (await fetch(`${base}/readyz`)).json()) as { upstreams: Record<string, PoolView> };
  return body.upstreams.conformance!;
}

async function settled(base: string): Promise<void> {
  await until('nothing in flight, queued or asked', async () => {
    const p = await pool(base);
    return p.inFlight === 0 && p.queued === 0 && p.clientRequests === 0;
  });
}

async function freshSessionSamples(url: URL): Promise<void> {
  const { client } = await connect(url, 'fresh');
  try {
    expect(await callTool(client, 'test_sampling', { prompt: 'after the crowd' })).toEqual({
      kind: 'ok',
      text: 'LLM response: sampled for fresh',
    });
  } finally {
    await client.close();
  }
}

const PER_SESSION = { mode: 'per-session', prefix: '', timeoutMs: 30_000 };
let fixture: HttpServerProcess | undefined;

describe.each([
  ['stdio', () => stdioUpstream('conformance', CONFORMANCE_SERVER, { ...PER_SESSION, pool: { max: POOL_MAX } })],
  ['http', () => httpUpstream('conformance', fixture!.url, { ...PER_SESSION, pool: { max: POOL_MAX } })],
] as const)('per-session eviction, fixture over %s', (transport, upstream) => {
  let gw: RunningGateway;

  beforeAll(async () => {
    if (transport === 'http') fixture = await startConformanceHttp();
    gw = await startGateway(exampleConfig({ upstreams: [upstream()] }));
  });

  afterAll(async () => {
    await gw?.stop();
    await fixture?.stop();
    fixture = undefined;
  });

  it(`${SESSIONS} sessions over pool.max ${POOL_MAX}, each asking its client: every call ends, none hangs`, async () => {
    const outcomes = await runSessions(gw.url);
    expect(outcomes).toHaveLength(SESSIONS * 2);
    expect(outcomes.filter((o) => o.kind === 'hang')).toEqual([]);
    expect(outcomes.filter((o) => o.kind === 'untyped')).toEqual([]);
    // A session that found every worker busy was told so (retryable); the others got through.
    for (const o of outcomes) if (o.kind === 'typed') expect(o.type).toBe('OVERLOADED');
    expect(outcomes.filter((o) => o.kind === 'ok').length).toBeGreaterThanOrEqual(POOL_MAX);
    for (const o of outcomes)
      if (o.kind === 'ok')
        expect(o.text).toMatch(/^(LLM response: sampled for client-\d+|Elicitation completed: action=accept, .*)$/);

    await settled(gw.base);
    expect(internals(gw.gateway.server).inFlight).toBe(0);
    await freshSessionSamples(gw.url);
  }, 120_000);
});

const fixtureChildren = (): number[] => childPidsRunning(CONFORMANCE_SERVER);

describe('a per-session worker whose upstream waits for its client', () => {
  let gw: RunningGateway;
  const open: TestClient[] = [];

  beforeAll(async () => {
    // One worker, no spares: which process serves which session is plain.
    gw = await startGateway(
      exampleConfig({
        upstreams: [stdioUpstream('conformance', CONFORMANCE_SERVER, { ...PER_SESSION, pool: { max: 1, spares: 0 } })],
      }),
    );
  });

  afterEach(async () => {
    for (const c of open.splice(0)) await c.client.close().catch(() => undefined);
    // Each test leaves the pool as it found it: nothing in flight, queued or asked.
    await settled(gw.base);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  async function client(name: string, g?: ReturnType<typeof gate>): Promise<TestClient> {
    const c = await connect(gw.url, name, g);
    open.push(c);
    return c;
  }

  it('is not evicted while its call waits for its client; once the client cancels that call, the question is withdrawn and it makes room', async () => {
    const held = gate();
    const asker = await client('asker', held);
    const cancel = new AbortController();
    const call = callTool(asker.client, 'test_sampling', { prompt: 'hold on' }, cancel.signal);
    await held.asked;
    expect(await pool(gw.base)).toMatchObject({ inFlight: 1, clientRequests: 1 });

    // The only worker is busy with a call waiting for its client: a new session finds the pool full.
    const other = await client('other');
    expect(await callTool(other.client, 'test_simple_text', {})).toEqual({ kind: 'typed', type: 'OVERLOADED' });
    expect((await pool(gw.base)).workers).toBe(1);

    // The client gives up on its call (notifications/cancelled): nobody needs the answer any more.
    cancel.abort();
    expect((await call).kind).toBe('hang'); // our own abort, not the gateway's doing
    await settled(gw.base);
    expect((await callTool(other.client, 'test_simple_text', {})).kind).toBe('ok');
  });

  it('that crashes fails its call and ends its request to the client at once', async () => {
    const held = gate();
    const asker = await client('crash', held);
    const call = callTool(asker.client, 'test_sampling', { prompt: 'crash now' });
    await held.asked;
    expect((await pool(gw.base)).clientRequests).toBe(1);
    const [pid] = fixtureChildren();
    process.kill(pid!, 'SIGKILL');
    expect(await call).toEqual({ kind: 'typed', type: 'UPSTREAM_UNAVAILABLE' });
    await until('its request to the client ended', async () => (await pool(gw.base)).clientRequests === 0);
    // The late answer reaches nobody and harms nothing; the session's next call gets a new worker.
    held.open();
    expect((await callTool(asker.client, 'test_simple_text', {})).kind).toBe('ok');
    await freshSessionSamples(gw.url);
  });

  it('whose session ends (DELETE) fails its call and ends its request to the client at once', async () => {
    const held = gate();
    const asker = await client('leaver', held);
    const call = callTool(asker.client, 'test_sampling', { prompt: 'leaving' });
    await held.asked;
    await asker.transport.terminateSession();
    expect(await call).toEqual({ kind: 'typed', type: 'REQUEST_CANCELLED' });
    await until('its request to the client ended', async () => (await pool(gw.base)).clientRequests === 0);
    held.open();
    await freshSessionSamples(gw.url);
  });
});

/**
 * A raw stdio MCP server (no SDK): tool `ask` answers at once and then, with no call in flight,
 * sends its client a sampling request (a question for no call); tool `withdraw` cancels that
 * request (notifications/cancelled); tool `hasty` asks the same during its call, then answers
 * the call without waiting for the client.
 */
const ASKING_SERVER = rawStdioServer(
  `return m.method === 'initialize'
    ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'asker', version: '1' } }
    : m.method === 'tools/list' ? { tools: ['ask', 'withdraw', 'hasty'].map((name) => ({ name, inputSchema: { type: 'object' } })) }
    : m.method === 'tools/call' ? { content: [{ type: 'text', text: m.params.name }] }
    : {};`,
  '',
  `if (m.method === 'tools/call' && m.params.name === 'ask') {
    setTimeout(() => send({ jsonrpc: '2.0', id: 'q1', method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } }), 50);
  }
  if (m.method === 'tools/call' && m.params.name === 'hasty') {
    send({ jsonrpc: '2.0', id: 'q2', method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } });
  }
  if (m.method === 'tools/call' && m.params.name === 'withdraw') send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'q1', reason: 'no longer needed' } });`,
);

describe('an upstream that withdraws its question', () => {
  let gw: RunningGateway;

  beforeAll(async () => {
    gw = await startGateway(
      exampleConfig({
        upstreams: [
          {
            name: 'conformance',
            transport: 'stdio',
            command: process.execPath,
            args: ['-e', ASKING_SERVER],
            prefix: '',
            mode: 'per-session',
            pool: { max: 1, spares: 0 },
          },
        ],
      }),
    );
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('frees its worker at once, and the client hears the cancellation under the id it was asked with', async () => {
    const client = new Client({ name: 'withdrawn', version: '1.0.0' }, { capabilities: { sampling: {} } });
    let asked!: () => void;
    const wasAsked = new Promise<void>((r) => (asked = r));
    const cancelled = new Promise<string>((resolve) => {
      client.setRequestHandler(CreateMessageRequestSchema, (_req, extra) => {
        asked();
        // Answered only if nobody withdraws the question.
        return new Promise((_r, reject) =>
          extra.signal.addEventListener(
            'abort',
            () => (resolve(String(extra.requestId)), reject(new Error('withdrawn'))),
          ),
        );
      });
    });
    await client.connect(new StreamableHTTPClientTransport(gw.url));
    try {
      expect(await callTool(client, 'ask', {})).toEqual({ kind: 'ok', text: 'ask' });
      await wasAsked;
      expect(await pool(gw.base)).toMatchObject({ inFlight: 0, clientRequests: 1 });
      expect(await callTool(client, 'withdraw', {})).toEqual({ kind: 'ok', text: 'withdraw' });
      expect(await cancelled).toMatch(/^mcpgw\./);
      await settled(gw.base);
      // Idle now: another session's call takes its place instead of being refused.
      const other = new Client({ name: 'other', version: '1.0.0' });
      await other.connect(new StreamableHTTPClientTransport(gw.url));
      expect(await callTool(other, 'ask', {})).toMatchObject({ kind: 'ok' });
      await other.close();
    } finally {
      await client.close();
    }
  });
  it('a question asked during a call is withdrawn when that call ends with its result', async () => {
    const client = new Client({ name: 'hasty', version: '1.0.0' }, { capabilities: { sampling: {} } });
    const withdrawn = new Promise<string>((resolve) => {
      client.setRequestHandler(
        CreateMessageRequestSchema,
        (_req, extra) =>
          new Promise((_r, reject) => {
            extra.signal.addEventListener(
              'abort',
              () => (resolve(String(extra.requestId)), reject(new Error('withdrawn'))),
            );
          }),
      );
    });
    await client.connect(new StreamableHTTPClientTransport(gw.url));
    try {
      expect(await callTool(client, 'hasty', {})).toEqual({ kind: 'ok', text: 'hasty' });
      expect(await withdrawn).toMatch(/^mcpgw\./);
      await settled(gw.base);
    } finally {
      await client.close();
    }
  });

  it("a question for no call does not hold the worker: another session's call takes it, and the question ends", async () => {
    const client = new Client({ name: 'unheeded', version: '1.0.0' }, { capabilities: { sampling: {} } });
    let asked!: () => void;
    const wasAsked = new Promise<void>((r) => (asked = r));
    const cancelled = new Promise<void>((resolve) => {
      client.setRequestHandler(CreateMessageRequestSchema, (_req, extra) => {
        asked();
        return new Promise((_r, reject) =>
          extra.signal.addEventListener('abort', () => (resolve(), reject(new Error('withdrawn')))),
        );
      });
    });
    await client.connect(new StreamableHTTPClientTransport(gw.url));
    const other = new Client({ name: 'other', version: '1.0.0' });
    try {
      expect(await callTool(client, 'ask', {})).toEqual({ kind: 'ok', text: 'ask' });
      await wasAsked;
      expect(await pool(gw.base)).toMatchObject({ inFlight: 0, clientRequests: 1, workers: 1 });
      await other.connect(new StreamableHTTPClientTransport(gw.url));
      expect(await callTool(other, 'withdraw', {})).toEqual({ kind: 'ok', text: 'withdraw' });
      await cancelled;
      await settled(gw.base);
    } finally {
      await other.close();
      await client.close();
    }
  });
});
