/**
 * Back-pressure, not buffering: a pool of one worker with one slot and a queue of one. A call
 * beyond that fails at once with a retryable OVERLOADED error, a queued call that waits too
 * long fails the same way, readiness is unaffected, and both are counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MCP_HEADERS,
  SLOW_SERVER,
  exampleConfig,
  openSession,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';

const PROTOCOL = '2025-06-18';

let gw: RunningGateway;
let sid: string;

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('slow', SLOW_SERVER, {
          pool: { min: 1, max: 1, maxInFlight: 1, queueSize: 1, queueTimeoutMs: 300 },
        }),
      ],
    }),
  );
  sid = await openSession(gw.url, PROTOCOL);
});

afterAll(async () => {
  await gw?.stop();
});

async function callTool(
  id: number,
  name: string,
  args: Record<string, unknown>,
): Promise<{ status: number; body: any }> {
  const res = await fetch(gw.url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
  return { status: res.status, body: JSON.parse(await res.text()) };
}

function textOf(body: any): string {
  return (body?.result?.content ?? []).map((c: { text?: string }) => c.text ?? '').join('');
}

interface PoolStatus {
  state: string;
  workers: number;
  ready: number;
  inFlight: number;
  queued: number;
}

async function readyz(): Promise<{ status: number; slow: PoolStatus }> {
  const res = await fetch(new URL('/readyz', gw.base));
  const body = (await res.json()) as { upstreams: Record<string, PoolStatus> };
  return { status: res.status, slow: body.upstreams.slow! };
}

async function until(condition: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function rejections(): Promise<Record<string, number>> {
  const text = await (await fetch(new URL('/metrics', gw.base))).text();
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^mcpgw_pool_rejections_total\{([^}]*)\} (\d+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.upstream === 'slow') counts[labels.reason!] = Number(m[2]);
  }
  return counts;
}

describe('a full pool', () => {
  it('queues one call, rejects the next at once with OVERLOADED and retryAfterMs, and times the queued one out', async () => {
    expect(await rejections()).toEqual({});

    // 1. Occupies the only slot.
    const busy = callTool(1, 'slow__sleep', { ms: 3000, steps: 0 });
    await until(async () => (await readyz()).slow.inFlight === 1, 10_000, 'the first call to occupy the worker');

    // 2 and 3, sent together: whichever reaches the gateway first waits in the queue (and will
    // not get the worker within 300 ms), the other finds the queue full.
    const pending = [
      callTool(2, 'slow__sleep', { ms: 10, steps: 0 }),
      callTool(3, 'slow__sleep', { ms: 10, steps: 0 }),
    ];
    // The one that found the queue full answers first, while the other still waits.
    const rejected = await Promise.race(pending);
    expect([2, 3]).toContain(rejected.body.id);
    expect(rejected.status).toBe(200);
    expect(rejected.body.result).toBeUndefined();
    expect(rejected.body.error.code).toBe(-32006);
    expect(rejected.body.error.data.type).toBe('OVERLOADED');
    expect(rejected.body.error.message).toMatch(/queue is full/);
    expect(typeof rejected.body.error.data.retryAfterMs).toBe('number');
    expect(rejected.body.error.data.retryAfterMs).toBeGreaterThan(0);

    // The first call is still running: the rejection did not wait for it.
    const during = await readyz();
    expect(during.status).toBe(200);
    expect(during.slow.state).toBe('ready');
    expect(during.slow.inFlight).toBe(1);

    const [two, three] = await Promise.all(pending);
    const timedOut = rejected.body.id === 2 ? three! : two!;
    expect(timedOut.body.id).toBe(rejected.body.id === 2 ? 3 : 2);
    expect(timedOut.status).toBe(200);
    expect(timedOut.body.result).toBeUndefined();
    expect(timedOut.body.error.code).toBe(-32006);
    expect(timedOut.body.error.data.type).toBe('OVERLOADED');
    expect(timedOut.body.error.message).toMatch(/no worker free within 300 ms/);
    expect(timedOut.body.error.data.retryAfterMs).toBeGreaterThan(0);

    const stillBusy = await readyz();
    expect(stillBusy.status).toBe(200);
    expect(stillBusy.slow.inFlight).toBe(1);
    expect(stillBusy.slow.queued).toBe(0);

    // The call that held the worker was never disturbed.
    const done = await busy;
    expect(done.body.error).toBeUndefined();
    expect(textOf(done.body)).toBe('slept 3000ms');

    expect(await rejections()).toEqual({ queue_full: 1, queue_timeout: 1 });
    const metrics = await (await fetch(new URL('/metrics', gw.base))).text();
    expect(metrics).toMatch(/^mcpgw_pool_queue_depth\{upstream="slow"\} 0$/m);
  });

  it('serves normally again once the worker is free, and readiness never changed', async () => {
    const after = await readyz();
    expect(after.status).toBe(200);
    expect(after.slow).toMatchObject({ state: 'ready', workers: 1, ready: 1, inFlight: 0, queued: 0 });

    const ok = await callTool(10, 'slow__sleep', { ms: 10, steps: 0 });
    expect(textOf(ok.body)).toBe('slept 10ms');

    expect(await rejections()).toEqual({ queue_full: 1, queue_timeout: 1 });
  });
});
