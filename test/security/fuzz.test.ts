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
import {
  ECHO_SERVER,
  MCP_HEADERS,
  ROOT,
  exampleConfig,
  openSession,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { httpUpstream, startEchoHttp, type HttpServerProcess } from '../support/http-upstream.js';
import {
  METHODS,
  httpCase,
  postCase,
  messageOf,
  rawBody,
  type Era,
  type HttpCase,
  type Shape,
} from '../support/fuzz.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const HANG_MS = 5000;

// Tools that answer at once (none that asks the client something and waits for it).
const TOOLS = [
  'echo__echo',
  'echo__add',
  'web__echo',
  'web__add',
  'fx__test_simple_text',
  'fx__test_error_handling',
  'fx__test_tool_with_progress',
  'nope__tool',
  'constructor',
];
const URIS = ['test://static-text', 'echo://readme', 'file:///etc/passwd', 'test://template/{id}/data', ''];
const message = messageOf(METHODS, { names: [...TOOLS, 'echo__greeting', 'fx__test_simple_prompt'], uris: URIS });

let gw: RunningGateway;
let echoHttp: HttpServerProcess;
let sessions: string[] = [];

const fuzzCase: fc.Arbitrary<HttpCase> = fc
  .record({
    era: fc.constantFrom<Era>(
      'session',
      'session',
      'forged-session',
      'no-session',
      'modern',
      'modern',
      'modern-bad-headers',
    ),
    shape: fc.constantFrom<Shape>('one', 'one', 'one', 'batch', 'raw'),
    messages: fc.array(message, { minLength: 1, maxLength: 4 }),
    raw: rawBody,
    session: fc.nat(),
  })
  .map((parts) => httpCase(parts, sessions));

const send = (c: HttpCase) => postCase(gw.url, c, HANG_MS);

beforeAll(async () => {
  echoHttp = await startEchoHttp();
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('echo', ECHO_SERVER, { pool: { min: 1, max: 2 } }),
        httpUpstream('web', echoHttp.url),
        stdioUpstream('fx', resolve(ROOT, 'examples/conformance/server.mjs'), {
          mode: 'per-session',
          pool: { max: 3 },
          timeoutMs: 4000,
        }),
      ],
    }),
  );
  sessions = [
    await openSession(gw.url, '2025-03-26'),
    await openSession(gw.url, '2025-06-18'),
    await openSession(gw.url, '2025-11-25'),
  ];
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
    await untilNothingHeld(gw, 15_000);
    // The gateway runs in this process: its growth over 2,000 hostile requests stays small.
    const grownMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
    expect(grownMb).toBeLessThan(300);
    for (const sid of sessions.slice(1)) {
      const r = await fetch(gw.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'after',
          method: 'tools/call',
          params: { name: 'echo__echo', arguments: { text: 'after' } },
        }),
      });
      expect(await r.json()).toMatchObject({ result: { content: [{ text: 'after' }] } });
    }
  }, 120_000);
});
