/**
 * Seeded fuzzing of the other doors: WebSocket frames, legacy HTTP+SSE `/messages` bodies, and
 * task calls in both eras (2025-11-25 sessions with `params.task`, 2026-07-28 requests declaring
 * the tasks extension), with real task ids and forged ones. Every reply must be a well-formed
 * JSON-RPC message whose errors come from the table; after each input a probe on the same
 * connection is answered within 5 s (nothing hangs, nothing wedges the connection); a connection
 * the gateway closes is closed with a code it documents. At the end nothing is held and another
 * client's call succeeds.
 *
 * Real gateway, real stdio upstreams (the echo server shared, the tasks fixture per session).
 * FUZZ_SEED and FUZZ_RUNS override the defaults.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  ECHO_SERVER,
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { SseReader } from '../support/sse.js';
import {
  TASK_METHODS,
  checkMessage,
  httpCase,
  messageOf,
  METHODS,
  postCase,
  rawBody,
  type Era,
  type Shape,
} from '../support/fuzz.js';
import { TASKS_EXT, modern, tasksUpstream } from '../support/tasks.js';
import { statelessMeta } from '../support/stateless.js';
import { until } from '../support/wait.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261202);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const HANG_MS = 5000;
/** Close codes the WebSocket transport documents: too big (1009), policy (1008: unread backlog, bad frames). */
const WS_CLOSE_CODES = [1008, 1009];

const NAMES = ['echo__echo', 'echo__add', 'echo__greeting', 'nope__tool', 'constructor'];
const URIS = ['echo://readme', 'file:///etc/passwd', ''];
const frame = fc.oneof(
  { weight: 4, arbitrary: messageOf(METHODS, { names: NAMES, uris: URIS }).map((m) => JSON.stringify(m)) },
  {
    weight: 1,
    arbitrary: fc
      .array(messageOf(METHODS, { names: NAMES, uris: URIS }), { minLength: 1, maxLength: 3 })
      .map((m) => JSON.stringify(m)),
  },
  { weight: 1, arbitrary: rawBody },
);

let gw: RunningGateway;
let taskIds: string[] = [];
let taskSessions: string[] = [];
/** A 2026-07-28 client that declares the tasks extension and nothing else. */
const TASKS_META = statelessMeta({ extensions: { [TASKS_EXT]: {} } });

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      limits: { bodyBytes: 64 * 1024 },
      websocket: { maxBufferedBytes: 256 * 1024 },
      upstreams: [
        stdioUpstream('echo', ECHO_SERVER, { pool: { min: 1, max: 2 } }),
        tasksUpstream({ pool: { max: 4, idleTimeoutMs: 2000 } }),
      ],
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
});

async function anotherClientCalls(): Promise<void> {
  const sid = await openSession(gw.url);
  const r = await post(
    gw.url,
    { jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'after' } } },
    { 'mcp-session-id': sid },
  );
  expect(r.json).toMatchObject({ result: { content: [{ text: 'after' }] } });
}

/** A WebSocket client that checks every message it reads and answers probes. */
class FuzzSocket {
  readonly seen = new Set<unknown>();
  closed: number | undefined;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as Record<string, unknown>;
      checkMessage(m);
      if ('id' in m) this.seen.add(m.id);
    });
    ws.on('close', (code) => (this.closed = code));
    ws.on('error', () => undefined);
  }
  static async open(): Promise<FuzzSocket> {
    const url = new URL('/ws', gw.base);
    url.protocol = 'ws:';
    const ws = new WebSocket(url, 'mcp');
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const s = new FuzzSocket(ws);
    ws.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: '#init',
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
      }),
    );
    await s.answered('#init');
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    return s;
  }
  async answered(id: string): Promise<boolean> {
    await until(`answer to ${id}`, () => this.seen.has(id) || this.closed !== undefined, HANG_MS, 2);
    return this.seen.has(id);
  }
}

describe(`fuzzing the other doors (seed ${SEED}, ${RUNS} inputs each)`, () => {
  it('WebSocket frames: every message typed, every probe answered, closes only with documented codes', async () => {
    let socket = await FuzzSocket.open();
    let probe = 0;
    await fc.assert(
      fc.asyncProperty(frame, async (text) => {
        socket.ws.send(text);
        const id = `#probe${probe++}`;
        socket.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
        if (await socket.answered(id)) return;
        // Not answered: the gateway closed the connection, and only for a reason it documents.
        expect(WS_CLOSE_CODES, `closed ${String(socket.closed)} after ${text.slice(0, 200)}`).toContain(socket.closed);
        socket = await FuzzSocket.open();
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    socket.ws.close();
    await untilNothingHeld(gw, 20_000);
    await anotherClientCalls();
  }, 120_000);

  it('legacy /messages bodies: every POST answered from the table, every reply on the stream typed', async () => {
    const controller = new AbortController();
    const res = await fetch(new URL('/sse', gw.base), {
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const reader = new SseReader(res);
    const endpoint = new URL((await reader.next())!.data, gw.base);
    const send = (body: string) =>
      fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(HANG_MS),
      });
    /** Reads the stream up to the answer to `id`, checking every message on the way. */
    const answerOn = async (id: string) => {
      for (;;) {
        const ev = await reader.next(HANG_MS);
        if (!ev) throw new Error('the stream ended');
        if (ev.event !== 'message') continue;
        const m = JSON.parse(ev.data) as Record<string, unknown>;
        checkMessage(m);
        if (m.id === id) return m;
      }
    };
    await send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: '#init',
        method: 'initialize',
        params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
      }),
    );
    await answerOn('#init');
    await send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    let probe = 0;
    await fc.assert(
      fc.asyncProperty(frame, async (body) => {
        const r = await send(body);
        const text = await r.text();
        if (r.status !== 202) {
          expect(r.headers.get('content-type'), `${r.status} ${text}`).toMatch(/^application\/json/);
          checkMessage(JSON.parse(text), r.status);
        }
        const id = `#probe${probe++}`;
        expect((await send(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }))).status).toBe(202);
        expect(await answerOn(id)).toMatchObject({ result: {} });
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    controller.abort();
    await untilNothingHeld(gw, 20_000);
    await anotherClientCalls();
  }, 120_000);

  it('task calls in both eras, on real and forged task ids: every reply typed, none hangs', async () => {
    taskSessions = [await openSession(gw.url, '2025-11-25'), await openSession(gw.url, '2025-11-25')];
    // Real task ids of both eras for the fuzzer to pick, beside the strings it makes up.
    const made = await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, TASKS_META);
    if (typeof made.result?.taskId === 'string') taskIds.push(made.result.taskId);
    const call = {
      jsonrpc: '2.0',
      id: 't',
      method: 'tools/call',
      params: { name: 'slow_compute', arguments: { seconds: 0 }, task: { ttl: 60_000 } },
    };
    const sessionTask = await post(gw.url, call, {
      'mcp-session-id': taskSessions[0]!,
      'mcp-protocol-version': '2025-11-25',
    });
    const sessionTaskId = (sessionTask.json as { result?: { task?: { taskId?: string } } }).result?.task?.taskId;
    if (typeof sessionTaskId === 'string') taskIds.push(sessionTaskId);
    expect(taskIds).toHaveLength(2);

    // Tools that end by themselves (none asks the client something and waits for it).
    const names = ['slow_compute', 'failing_job', 'protocol_error_job', 'greet', 'pid', 'nope'];
    const message = messageOf(
      TASK_METHODS,
      { names, uris: [''], taskIds: () => taskIds, arguments: [{ seconds: 0 }, { seconds: 0.2 }, { name: 'x' }] },
      20,
    );
    const cases = fc
      .record({
        era: fc.constantFrom<Era>('session', 'session', 'forged-session', 'modern', 'modern', 'modern-bad-headers'),
        shape: fc.constantFrom<Shape>('one', 'one', 'one', 'one', 'one', 'one', 'raw'),
        messages: fc.array(message, { minLength: 1, maxLength: 1 }),
        raw: rawBody,
        session: fc.nat(),
      })
      .map((parts) => httpCase(parts, taskSessions, { sessionVersion: () => '2025-11-25', statelessMeta: TASKS_META }));
    await fc.assert(
      fc.asyncProperty(cases, (c) => postCase(gw.url, c, HANG_MS)),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    await untilNothingHeld(gw, 20_000);
    await anotherClientCalls();
  }, 180_000);
});
