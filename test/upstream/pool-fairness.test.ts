/**
 * A shared stdio worker reads its calls in order, so what waits on it is the weight of its
 * unanswered requests, not their count, and the pool's queue is shared by every client. Two
 * guards, each against a real stdio server that blocks its own event loop while it works, a real
 * gateway, loopback:
 * - `pool.maxInFlightBytes`: a worker whose unanswered requests weigh that much takes no more
 *   calls; another starts, and a small call goes there instead of behind the large one;
 * - `pool.heavyRequestBytes`: a worker reading a large call is heavy (not full): another starts
 *   and small calls go there;
 * - the queue takes turns between clients: one session's ten queued calls hold up another
 *   session's one call by one turn, not by ten.
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
import { poolStatus, untilNothingHeld } from '../support/health.js';
import { SERIAL_SERVER } from '../support/serial-server.js';
import { until } from '../support/wait.js';

const MB = 1024 * 1024;
let dir: string;
let script: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-fair-'));
  script = join(dir, 'serial.mjs');
  writeFileSync(script, SERIAL_SERVER);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A call, and the order in which calls ended: `[tool, pid]` of its answer. */
function call(
  gw: RunningGateway,
  sid: string,
  id: number,
  name: string,
  args: Record<string, unknown>,
  ended: string[],
): Promise<[string, number]> {
  const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
  return post(gw.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, headers).then(
    (r) => {
      const [tool, pid] = toolText(r.json.result).split(' ');
      ended.push(`${tool} ${id}`);
      return [tool!, Number(pid)];
    },
  );
}

/**
 * A 4 s call padded with `padChars` on the only worker, then a second worker, then a small call:
 * it is served by the other worker and ends first, and nothing stays held.
 */
async function quickPassesLarge(gw: RunningGateway, padChars: number): Promise<void> {
  const sid = await openSession(gw.url);
  const ended: string[] = [];
  const large = call(gw, sid, 1, 'serial__block', { ms: 4000, pad: 'x'.repeat(padChars) }, ended);
  await until('the large call to reach the worker', async () => (await poolStatus(gw, 'serial')).inFlight === 1);
  await until('a second worker', async () => (await poolStatus(gw, 'serial')).ready === 2);
  const [, quickPid] = await call(gw, sid, 2, 'serial__quick', {}, ended);
  const [, largePid] = await large;
  expect(ended).toEqual(['quick 2', 'block 1']);
  expect(quickPid).not.toBe(largePid);
  await untilNothingHeld(gw);
}

describe('pool.maxInFlightBytes: a worker busy with a large call takes no small one', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // busyAfterMs 0: only the weight can make the worker busy here.
    const pool = { min: 1, max: 2, busyAfterMs: 0, maxInFlightBytes: MB };
    gw = await startGateway(exampleConfig({ upstreams: [stdioUpstream('serial', script, { pool })] }));
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('a 1.5 MB call fills its worker: a second starts and a small call served by it ends first', async () => {
    expect(await poolStatus(gw, 'serial')).toMatchObject({ workers: 1, ready: 1 });
    await quickPassesLarge(gw, 1.5 * MB);
  }, 30_000);
});

describe('pool.heavyRequestBytes: a worker reading a large call is heavy, and another starts', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // maxInFlightBytes stays at its default (2 MiB, more than the call) and busyAfterMs is 0:
    // only the weight can make this worker heavy, and it is not full.
    const pool = { min: 1, max: 2, busyAfterMs: 0, heavyRequestBytes: 256 * 1024 };
    gw = await startGateway(exampleConfig({ upstreams: [stdioUpstream('serial', script, { pool })] }));
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('a 400 KB call on the only worker starts a second; a small call goes there and ends first', async () => {
    await quickPassesLarge(gw, 400 * 1024);
  }, 30_000);
});

describe("the pool's queue takes turns between clients", () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    const pool = { min: 1, max: 1, maxInFlight: 1, busyAfterMs: 0, queueTimeoutMs: 20_000 };
    gw = await startGateway(exampleConfig({ upstreams: [stdioUpstream('serial', script, { pool })] }));
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("one session's ten queued calls hold up another session's call by one turn", async () => {
    const [busy, other] = [await openSession(gw.url), await openSession(gw.url)];
    const ended: string[] = [];
    // The first call holds the worker for 2 s, so the other nine are all queued however slowly a
    // loaded machine delivers them (with 150 ms each, the queue could drain before it filled).
    const flood = Array.from({ length: 10 }, (_, i) =>
      call(gw, busy, i + 1, 'serial__block', { ms: i === 0 ? 2000 : 150 }, ended),
    );
    await until("the busy session's calls to queue", async () => (await poolStatus(gw, 'serial')).queued === 9);
    await call(gw, other, 99, 'serial__quick', {}, ended);
    // The one in flight when it came, then the other session's turn: at most one more before it.
    expect(ended.indexOf('quick 99')).toBeLessThanOrEqual(2);
    await Promise.all(flood);
    expect(ended).toHaveLength(11);
    await untilNothingHeld(gw);
  }, 30_000);
});
