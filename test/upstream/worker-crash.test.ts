/**
 * A worker that dies mid-call: the caller gets a JSON-RPC error at once (never a hang), the pool
 * starts a new worker, and the next call works. And on shutdown no upstream process survives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  MCP_HEADERS,
  SLOW_SERVER,
  exampleConfig,
  isAlive,
  openSession,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { internals } from '../../src/gateway/internals.js';

const PROTOCOL = '2025-06-18';

let gw: RunningGateway;
let sid: string;
let nextId = 1;
/** Every upstream process id seen in this file. */
const seenPids = new Set<number>();

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('slow', SLOW_SERVER, { pool: { min: 1, max: 1 } })],
    }),
  );
  sid = await openSession(gw.url, PROTOCOL);
});

afterAll(async () => {
  await gw?.stop();
});

interface Reply {
  status: number;
  body: any;
  /** performance.now() when the reply had fully arrived. */
  at: number;
}

async function callTool(name: string, args: Record<string, unknown>, id: number = nextId++): Promise<Reply> {
  const res = await fetch(gw.url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  const at = performance.now();
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, body: JSON.parse(text), at };
}

function textOf(body: any): string {
  return (body?.result?.content ?? []).map((c: { text?: string }) => c.text ?? '').join('');
}

/** The pid of the worker that answered, or undefined when the call failed. */
async function pidOf(tool: 'slow__pid' | 'echo__whoami'): Promise<number | undefined> {
  const { body } = await callTool(tool, {});
  if (body.error) return undefined;
  const pid = JSON.parse(textOf(body)).pid as number;
  seenPids.add(pid);
  return pid;
}

/** Polls `slow__pid` until a worker other than `old` answers; bounded. */
async function newSlowPid(old: number, ms = 15_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const pid = await pidOf('slow__pid');
    if (pid !== undefined && pid !== old) return pid;
    if (Date.now() > deadline) throw new Error(`no new slow worker within ${ms} ms (last answer: ${pid})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a worker killed mid-call', () => {
  it('fails the call in flight with UPSTREAM_UNAVAILABLE within 1 s of kill -9, restarts the worker, and the next call succeeds', async () => {
    const before = await pidOf('slow__pid');
    expect(before).toBeTypeOf('number');

    const sleepId = 9001;
    const sleeping = callTool('slow__sleep', { ms: 5000, steps: 0 }, sleepId);
    // Requests on one worker are written in order: once `pid` answers, the worker has the sleep.
    const pid = await pidOf('slow__pid');
    expect(pid).toBe(before);
    expect(internals(gw.gateway.server).inFlight).toBe(1);
    expect(isAlive(pid!)).toBe(true);

    const killedAt = performance.now();
    process.kill(pid!, 'SIGKILL');
    const reply = await sleeping;
    const elapsed = reply.at - killedAt;

    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe(sleepId);
    expect(reply.body.result).toBeUndefined();
    expect(reply.body.error.code).toBe(-32004);
    expect(reply.body.error.data.type).toBe('UPSTREAM_UNAVAILABLE');
    expect(reply.body.error.message).toMatch(/SIGKILL/);
    // A correctness bound (the error must not wait for a timeout), not a speed benchmark.
    expect(elapsed).toBeLessThan(1000);

    const restarted = await newSlowPid(pid!);
    expect(restarted).not.toBe(pid);
    expect(isAlive(pid!)).toBe(false);
    expect(isAlive(restarted)).toBe(true);

    const next = await callTool('slow__sleep', { ms: 10, steps: 0 });
    expect(next.body.error).toBeUndefined();
    expect(textOf(next.body)).toBe('slept 10ms');
    expect(internals(gw.gateway.server).inFlight).toBe(0);
  });

  it('fails a call whose worker exits by itself (slow__crash), and the next call succeeds on a new worker', async () => {
    const before = await pidOf('slow__pid');
    expect(before).toBeTypeOf('number');

    const crashed = await callTool('slow__crash', {}, 777);
    expect(crashed.status).toBe(200);
    expect(crashed.body.id).toBe(777);
    expect(crashed.body.error.code).toBe(-32004);
    expect(crashed.body.error.data.type).toBe('UPSTREAM_UNAVAILABLE');
    expect(crashed.body.error.message).toMatch(/exited with code 1/);

    const next = await callTool('slow__sleep', { ms: 10, steps: 0 });
    expect(next.body.error).toBeUndefined();
    expect(textOf(next.body)).toBe('slept 10ms');

    const after = await newSlowPid(before!);
    expect(isAlive(before!)).toBe(false);
    expect(isAlive(after)).toBe(true);

    const metrics = await (await fetch(new URL('/metrics', gw.base))).text();
    expect(metrics).toMatch(/^mcpgw_upstream_restarts_total\{upstream="slow"\} 2$/m);
  });

  it('the other upstream was not affected', async () => {
    const echoPid = await pidOf('echo__whoami');
    expect(echoPid).toBeTypeOf('number');
    const echoed = await callTool('echo__echo', { text: 'still here' });
    expect(textOf(echoed.body)).toBe('still here');
  });

  it('leaves no upstream process behind after gateway.stop()', async () => {
    const slow = await pidOf('slow__pid');
    const echo = await pidOf('echo__whoami');
    expect(slow).toBeTypeOf('number');
    expect(echo).toBeTypeOf('number');
    expect(isAlive(slow!)).toBe(true);
    expect(isAlive(echo!)).toBe(true);
    // The killed one, the crashed one, their replacements and the echo worker.
    expect(seenPids.size).toBeGreaterThanOrEqual(4);

    await gw.stop();

    const deadline = Date.now() + 5000;
    let alive = [...seenPids].filter(isAlive);
    while (alive.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      alive = alive.filter(isAlive);
    }
    expect(alive).toEqual([]);
  });
});
