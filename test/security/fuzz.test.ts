/**
 * Seeded fuzzing of the MCP endpoint: ~2,000 generated POST bodies across every method the
 * gateway routes (and invented ones), every params field replaced by arbitrary JSON, `_meta` and
 * ids of every type, both eras (2025 sessions, real and forged; 2026-07-28 with its headers, right
 * and wrong), batches, and bodies that are not JSON-RPC at all. Each reply must be well-formed
 * (202 empty, or JSON-RPC as JSON or SSE, errors from the table), carry no 5xx the table does
 * not give, and arrive within 5 s. At the end nothing is held and memory is within a bound.
 *
 * Real gateway, real stdio upstreams (shared and per-session) and a real HTTP upstream.
 * FUZZ_SEED and FUZZ_RUNS override the defaults, to reproduce or widen a run.
 */
import { resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, type ErrorName } from '../../src/jsonrpc/errors.js';
import { ECHO_SERVER, MCP_HEADERS, ROOT, exampleConfig, openSession, startGateway, stdioUpstream, type RunningGateway } from '../support/gateway.js';
import { heldWork } from '../support/health.js';
import { httpUpstream, startEchoHttp, type HttpServerProcess } from '../support/http-upstream.js';
import { MODERN_META, MODERN_VERSION } from '../support/modern.js';
import { parseSse } from '../support/sse.js';
import { until } from '../support/wait.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const HANG_MS = 5000;
/** Every status the table gives, and 200 (in-band errors and results). */
const STATUSES = [200, ...new Set(Object.values(ERRORS).map((e) => e.httpStatus))];

const METHODS = [
  'initialize', 'ping', 'server/discover', 'tools/list', 'tools/call', 'prompts/list', 'prompts/get',
  'resources/list', 'resources/read', 'resources/templates/list', 'resources/subscribe', 'resources/unsubscribe',
  'logging/setLevel', 'completion/complete', 'subscriptions/listen', 'notifications/initialized',
  'notifications/cancelled', 'notifications/progress', 'notifications/roots/list_changed',
  'tasks/get', 'invented/method', 'constructor', '__proto__', 'toString', '', 'tools/call/extra',
];
// Tools that answer at once (none that asks the client something and waits for it).
const TOOLS = ['echo__echo', 'echo__add', 'web__echo', 'web__add', 'fx__test_simple_text', 'fx__test_error_handling', 'fx__test_tool_with_progress', 'nope__tool', 'constructor'];
const URIS = ['test://static-text', 'echo://readme', 'file:///etc/passwd', 'test://template/{id}/data', ''];

let gw: RunningGateway;
let echoHttp: HttpServerProcess;
let sessions: string[] = [];

/** Arbitrary JSON of bounded size: what a hostile client puts where a field should be. */
const anyJson = fc.jsonValue({ maxDepth: 3 });

/** A field's good value, or anything at all. */
const field = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: anyJson });

const meta = fc.oneof(
  fc.constant(undefined),
  fc.record({ progressToken: field(fc.oneof(fc.string(), fc.integer())) }, { requiredKeys: [] }),
  anyJson,
);

function paramsFor(method: string): fc.Arbitrary<unknown> {
  const common = { _meta: meta, cursor: field(fc.string()) };
  const shaped = fc.record(
    {
      ...common,
      name: field(fc.constantFrom(...TOOLS, 'echo__greeting', 'fx__test_simple_prompt')),
      arguments: field(fc.oneof(fc.constant({ text: 'fuzz' }), fc.constant({ a: 1, b: 2 }), fc.dictionary(fc.string(), anyJson, { maxKeys: 4 }))),
      uri: field(fc.constantFrom(...URIS)),
      level: field(fc.constantFrom('debug', 'info', 'emergency', 'loud')),
      protocolVersion: field(fc.constantFrom('2025-06-18', '2025-11-25', '2025-03-26', '1999-01-01')),
      capabilities: field(fc.constant({})),
      requestId: field(fc.oneof(fc.string(), fc.integer())),
      ref: field(fc.record({ type: fc.constantFrom('ref/prompt', 'ref/resource', 'ref/other'), name: fc.string(), uri: fc.constantFrom(...URIS) })),
      argument: field(fc.record({ name: fc.string(), value: fc.string() })),
      notifications: field(fc.record({ toolsListChanged: fc.boolean(), resourceSubscriptions: fc.array(fc.constantFrom(...URIS), { maxLength: 2 }) })),
      requestState: field(fc.string()),
    },
    { requiredKeys: [] },
  );
  return fc.oneof({ weight: 6, arbitrary: shaped }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: anyJson });
}

const id = fc.oneof({ weight: 6, arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()) }, { weight: 1, arbitrary: anyJson }, { weight: 1, arbitrary: fc.constant(undefined) });

const message = fc.constantFrom(...METHODS).chain((method) =>
  fc.record({ jsonrpc: field(fc.constant('2.0')), id, method: field(fc.constant(method)), params: paramsFor(method) }, { requiredKeys: ['jsonrpc', 'method'] }),
);

type Era = 'session' | 'forged-session' | 'no-session' | 'modern' | 'modern-bad-headers';
const era = fc.constantFrom<Era>('session', 'session', 'forged-session', 'no-session', 'modern', 'modern', 'modern-bad-headers');

interface Case {
  era: Era;
  /** A subscriptions/listen request: its reply is a stream that stays open. */
  listens: boolean;
  body: string;
  headers: Record<string, string>;
}

function modernise(m: Record<string, unknown>): Record<string, unknown> {
  const params = typeof m.params === 'object' && m.params !== null && !Array.isArray(m.params) ? (m.params as Record<string, unknown>) : {};
  const own = typeof params._meta === 'object' && params._meta !== null ? params._meta : {};
  return { ...m, params: { ...params, _meta: { ...MODERN_META, ...own } } };
}

const fuzzCase: fc.Arbitrary<Case> = fc
  .record({
    era,
    shape: fc.constantFrom('one', 'one', 'one', 'batch', 'raw'),
    messages: fc.array(message, { minLength: 1, maxLength: 4 }),
    raw: fc.oneof(fc.string(), fc.constantFrom('', '{', '[]', 'null', '[[[[', '{"jsonrpc":"2.0"}', '"x"', '12')),
    session: fc.nat(),
  })
  .map(({ era: e, shape, messages, raw, session }) => {
    const headers: Record<string, string> = {};
    if (e === 'session') headers['mcp-session-id'] = sessions[session % sessions.length]!;
    if (e === 'forged-session') headers['mcp-session-id'] = `forged-${session}`;
    if (e.startsWith('session') || e === 'forged-session') headers['mcp-protocol-version'] = session % 3 === 0 ? '2025-03-26' : '2025-06-18';
    let items = messages as Array<Record<string, unknown>>;
    if (e.startsWith('modern')) {
      items = items.map(modernise);
      const first = items[0]!;
      const params = first.params as Record<string, unknown>;
      headers['mcp-protocol-version'] = MODERN_VERSION;
      headers['mcp-method'] = e === 'modern' ? String(first.method) : 'tools/list';
      const name = params.name ?? params.uri;
      if (typeof name === 'string' && /^[\x21-\x7e]*$/.test(name)) headers['mcp-name'] = e === 'modern' ? name : `${name}x`;
    }
    const body = shape === 'raw' ? raw : JSON.stringify(shape === 'batch' ? items : items[0]);
    return { era: e, body, headers, listens: items[0]!.method === 'subscriptions/listen' };
  });

/** A listen stream stays open by design: its first message (the acknowledgement) is enough. */
async function firstEvents(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!/\ndata: \{/.test(`\n${text}`) || !text.endsWith('\n\n')) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

/** Every JSON-RPC message in a reply body, by its content type. */
function repliesOf(contentType: string, text: string): unknown[] {
  if (contentType.startsWith('text/event-stream')) {
    return parseSse(text)
      .filter((e) => e.data !== '')
      .map((e) => JSON.parse(e.data) as unknown);
  }
  const value = JSON.parse(text) as unknown;
  return Array.isArray(value) ? value : [value];
}

function checkMessage(m: unknown, status: number): void {
  expect(typeof m).toBe('object');
  const r = m as Record<string, unknown>;
  expect(r.jsonrpc).toBe('2.0');
  if ('method' in r) return; // a notification or request on an SSE reply (progress, logging)
  expect('id' in r).toBe(true);
  expect('result' in r !== 'error' in r).toBe(true);
  if (!('error' in r)) return;
  const error = r.error as { code: unknown; message: unknown; data?: { type?: string } };
  expect(Number.isInteger(error.code)).toBe(true);
  expect(typeof error.message).toBe('string');
  const type = error.data?.type;
  // Upstreams' own errors pass through in-band; every error of the gateway's names its table entry.
  if (type === undefined) {
    expect(status).toBe(200);
    return;
  }
  expect(Object.keys(ERRORS)).toContain(type);
  const entry = ERRORS[type as ErrorName];
  expect(error.code).toBe(entry.code);
  if (status !== 200) expect(status).toBe(entry.httpStatus);
}

async function send(c: Case): Promise<void> {
  let res: Response;
  try {
    res = await fetch(gw.url, { method: 'POST', headers: { ...MCP_HEADERS, ...c.headers }, body: c.body, signal: AbortSignal.timeout(HANG_MS) });
  } catch (err) {
    throw new Error(`no reply within ${HANG_MS} ms (or the connection broke): ${String(err)}`);
  }
  const contentType = res.headers.get('content-type') ?? '';
  const text = c.listens && contentType.startsWith('text/event-stream') ? await firstEvents(res) : await res.text();
  if (res.status === 202) {
    expect(text).toBe('');
    return;
  }
  expect(STATUSES, `${res.status} ${text}`).toContain(res.status);
  expect(contentType, `${res.status} ${text}`).toMatch(/^(application\/json|text\/event-stream)/);
  const messages = repliesOf(contentType, text);
  expect(messages.length).toBeGreaterThan(0);
  for (const m of messages) checkMessage(m, res.status);
  if (res.status >= 500) {
    // Only where the table says so: a store or limit that tells the client to come back.
    for (const m of messages) expect(ERRORS[(m as { error: { data: { type: ErrorName } } }).error.data.type].httpStatus).toBeGreaterThanOrEqual(500);
  }
}

beforeAll(async () => {
  echoHttp = await startEchoHttp();
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('echo', ECHO_SERVER, { pool: { min: 1, max: 2 } }),
        httpUpstream('web', echoHttp.url),
        stdioUpstream('fx', resolve(ROOT, 'examples/conformance/server.mjs'), { mode: 'per-session', pool: { max: 3 }, timeoutMs: 4000 }),
      ],
    }),
  );
  sessions = [await openSession(gw.url, '2025-03-26'), await openSession(gw.url, '2025-06-18'), await openSession(gw.url, '2025-11-25')];
});

afterAll(async () => {
  await gw?.stop();
  await echoHttp?.stop();
});

describe(`fuzzing the endpoint (seed ${SEED}, ${RUNS} inputs)`, () => {
  it('every reply is well-formed and typed, none hangs, nothing is held after, memory stays bounded', async () => {
    const rssBefore = process.memoryUsage().rss;
    await fc.assert(fc.asyncProperty(fuzzCase, send), { seed: SEED, numRuns: RUNS, endOnFailure: true });
    // Calls still in flight are bounded by their timeouts; then every slot is free again.
    await until('nothing held', async () => {
      const held = await heldWork(gw);
      return held.inFlight === 0 && held.queued === 0 && held.tracked === 0;
    }, 15_000);
    // The gateway runs in this process: its growth over 2,000 hostile requests stays small.
    const grownMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
    expect(grownMb).toBeLessThan(300);
    for (const sid of sessions.slice(1)) {
      const r = await fetch(gw.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'after' } } }),
      });
      expect(await r.json()).toMatchObject({ result: { content: [{ text: 'after' }] } });
    }
  }, 120_000);
});
