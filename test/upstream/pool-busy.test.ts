/**
 * Head-of-line blocking on a shared stdio worker: a stdio server answers in order, so one slow
 * call holds up every call behind it while the worker has far fewer than `maxInFlight` calls.
 * With `pool.busyAfterMs`, a worker that has answered nothing for that long while calls wait on
 * it counts as busy: another worker starts (up to `max`), and the next short call is served by
 * it, before the slow one ends. Past `max` the stalled workers still take calls. A real stdio
 * upstream that blocks its own event loop while it works (as a synchronous tool does), a real
 * gateway, loopback.
 *
 * The slow calls end when the test releases them (a file they wait for, asleep: no CPU taken
 * from the worker that has to start), never after a time: how long a worker takes to start
 * under load changes how long the test runs, not what it sees.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  toolText,
  type RunningGateway,
} from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { SERIAL_SERVER } from '../support/serial-server.js';
import { until, within } from '../support/wait.js';

const BUSY_AFTER_MS = 300;
/**
 * A bound on a worker's start (a node process and its initialize), not a speed check: under a
 * full suite on 2 cores it once took longer than until()'s 10 s default (CI, Node 22), and
 * nothing here ends by itself while it waits.
 */
const START_BOUND_MS = 40_000;
/** A bound on a call to a ready, idle worker: one that waited behind a held worker would never end. */
const ANSWER_BOUND_MS = 15_000;

let dir: string;
let gw: RunningGateway;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-busy-'));
  const script = join(dir, 'serial.mjs');
  writeFileSync(script, SERIAL_SERVER);
  gw = await startGateway(
    exampleConfig({
      upstreams: [stdioUpstream('serial', script, { pool: { min: 1, max: 2, busyAfterMs: BUSY_AFTER_MS } })],
    }),
  );
});

afterAll(async () => {
  // A test that failed while its calls were held lets them go, so the workers stop on stdin EOF.
  if (dir) for (const n of ['release-1', 'release-2']) writeFileSync(join(dir, n), '');
  await gw?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function pool(): Promise<{ workers: number; ready: number; inFlight: number; queued: number }> {
  const body = (await (await fetch(new URL('/readyz', gw.base))).json()) as {
    upstreams: Record<string, { workers: number; ready: number; inFlight: number; queued: number }>;
  };
  return body.upstreams.serial!;
}

/** A call, and the order in which calls ended: `[tool, pid]` of its answer. */
function call(
  sid: string,
  id: number,
  name: string,
  args: Record<string, unknown>,
  ended: string[],
): Promise<[string, number]> {
  return post(
    gw.url,
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  ).then((r) => {
    const [tool, pid] = toolText(r.json.result).split(' ');
    ended.push(tool!);
    return [tool!, Number(pid)];
  });
}

describe('a shared pool scales on stalled workers, not only on full ones', () => {
  it('a slow call holds the only worker: after busyAfterMs another starts, and a short call served by it ends first', async () => {
    const sid = await openSession(gw.url);
    const ended: string[] = [];
    expect(await pool()).toMatchObject({ workers: 1, ready: 1 });

    const release = join(dir, 'release-1');
    const slow = call(sid, 1, 'serial__block', { until: release }, ended);
    await until('the slow call to reach the worker', async () => (await pool()).inFlight === 1);
    // Nothing but the stall: one call in flight of maxInFlight 32, an empty queue.
    await until(
      'a second worker, started because the first answered nothing for busyAfterMs',
      async () => (await pool()).ready === 2,
      START_BOUND_MS,
    );

    const [, quickPid] = await within(
      'the short call, on the second worker',
      call(sid, 2, 'serial__quick', {}, ended),
      ANSWER_BOUND_MS,
    );
    writeFileSync(release, '');
    const [, slowPid] = await slow;
    expect(ended).toEqual(['quick', 'block']);
    expect(quickPid).not.toBe(slowPid);
    await untilNothingHeld(gw);
  }, 60_000);

  it('at max, stalled workers still take calls: none is refused and no third worker starts', async () => {
    const sid = await openSession(gw.url);
    const ended: string[] = [];
    await until('both workers ready', async () => (await pool()).ready === 2);
    const release = join(dir, 'release-2');
    const first = call(sid, 1, 'serial__block', { until: release }, ended);
    const second = call(sid, 2, 'serial__block', { until: release }, ended);
    await until('both workers stalled', async () => (await pool()).inFlight === 2);
    // Held until released: this wait can only be longer than busyAfterMs, never too short.
    await new Promise((r) => setTimeout(r, 2 * BUSY_AFTER_MS));
    const third = call(sid, 3, 'serial__quick', {}, ended);
    // Taken by a stalled worker at once: neither queued nor refused, and no third worker.
    await until('the short call sent to a stalled worker', async () => {
      const p = await pool();
      return p.inFlight === 3 && p.queued === 0;
    });
    expect((await pool()).workers).toBe(2);
    writeFileSync(release, '');
    const pids = await Promise.all([first, second, third]);
    expect(new Set(pids.map(([, pid]) => pid)).size).toBe(2);
    expect((await pool()).workers).toBe(2);
    // Another client's call, and nothing left held.
    const other = await openSession(gw.url);
    expect((await call(other, 9, 'serial__quick', {}, ended))[0]).toBe('quick');
    await untilNothingHeld(gw);
  }, 30_000);
});
