/**
 * upstreams[].fairness through the real gateway: two API-key principals against a stdio upstream
 * whose calls answer only when the test releases them (so "in flight" holds however slow the
 * machine is). Alice floods; Bob's call gets a place at once and answers while Alice's wait;
 * Alice's overflow gets FAIRNESS_QUEUE_FULL (429, Retry-After). A cancelled waiting call, a client that
 * disconnects, a session's end, call_tool and a task all count as they should, and nothing leaks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import { MCP_HEADERS, post, toolText } from '../support/gateway.js';
import { heldServer, type HeldServer } from '../support/held-server.js';
import { sample } from '../support/metrics.js';
import { apiKeyAuth, bearer, keyOf, openAs, sessionHeaders } from '../support/rate-limits.js';
import { startFromFile } from '../support/reload.js';
import { statelessRequest } from '../support/stateless.js';
import { legacySession } from '../support/tasks.js';
import { until } from '../support/wait.js';

const SHARE = 2;
const QUEUE = 3;
const cleanups: Array<() => Promise<void>> = [];
let held: HeldServer;
let gw: Awaited<ReturnType<typeof startFromFile>>;

/** The config: one worker with room for 16 calls, so only fairness stands between Alice and every place. */
function config(fairness: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    auth: apiKeyAuth(['alice', 'bob']),
    toolSearch: { enabled: true },
    upstreams: [
      {
        name: 'held',
        transport: 'stdio',
        command: held.command,
        args: held.args,
        pool: { min: 1, max: 1, maxInFlight: 16 },
        tasks: { tools: ['hold'] },
        ...(fairness ? { fairness } : {}),
      },
    ],
  };
}

beforeAll(async () => {
  held = heldServer();
  gw = await startFromFile(config({ maxInFlightPerPrincipal: SHARE, queue: QUEUE }), cleanups);
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  held?.remove();
});

const shares = () => internals(gw.gateway.server).fairShares('held');
const headersOf = (principal: string, sid: string) => ({ ...bearer(keyOf(principal)), ...sessionHeaders(sid) });

let nextId = 1;
/** One tools/call of held__hold (or through call_tool) in `principal`'s session, answered when `key` is released. */
function hold(principal: string, sid: string, key: string, viaCallTool = false) {
  const id = nextId++;
  const args = { key };
  const params = viaCallTool
    ? { name: 'call_tool', arguments: { name: 'held__hold', arguments: args } }
    : { name: 'held__hold', arguments: args };
  let done = false;
  const reply = post(gw.url, { jsonrpc: '2.0', id, method: 'tools/call', params }, headersOf(principal, sid)).finally(
    () => (done = true),
  );
  return { id, reply, done: () => done };
}

async function settled(want: { inFlight: number; queued: number }): Promise<void> {
  await until(`fair shares ${JSON.stringify(want)}`, () => {
    const now = shares();
    return now.inFlight === want.inFlight && now.queued === want.queued;
  });
}

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  return sample(await (await fetch(new URL('/metrics', gw.base))).text(), name, labels);
}

describe('fairness through the gateway', () => {
  it("gives Bob a place while Alice's calls wait, and refuses Alice's overflow with FAIRNESS_QUEUE_FULL", async () => {
    const alice = await openAs(gw.url, 'alice');
    const bob = await openAs(gw.url, 'bob');
    const first = [hold('alice', alice, 'a1'), hold('alice', alice, 'a1')];
    await settled({ inFlight: SHARE, queued: 0 });
    const waiting = Array.from({ length: QUEUE }, () => hold('alice', alice, 'a1'));
    await settled({ inFlight: SHARE, queued: QUEUE });
    const overflow = await Promise.all([hold('alice', alice, 'a1').reply, hold('alice', alice, 'a1').reply]);
    for (const r of overflow) {
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.json.error).toMatchObject({
        code: -32015,
        data: { type: 'FAIRNESS_QUEUE_FULL', upstream: 'held', retryable: true, retryAfterMs: 1000 },
      });
    }

    // Bob's call goes straight to the upstream, and answers while every one of Alice's still waits.
    const b = hold('bob', bob, 'b1');
    await settled({ inFlight: SHARE + 1, queued: QUEUE });
    held.release('b1');
    expect(toolText((await b.reply).json.result)).toBe('released b1');
    expect([...first, ...waiting].some((c) => c.done())).toBe(false);

    held.release('a1');
    for (const c of [...first, ...waiting]) expect(toolText((await c.reply).json.result)).toBe('released a1');
    await settled({ inFlight: 0, queued: 0 });
    expect(internals(gw.gateway.server).inFlight).toBe(0);
    expect(await metric('mcpgw_fairness_waits_total', { upstream: 'held', outcome: 'queued' })).toBe(QUEUE);
    expect(await metric('mcpgw_fairness_waits_total', { upstream: 'held', outcome: 'refused' })).toBe(2);
    expect(await metric('mcpgw_fairness_queued', { upstream: 'held' })).toBe(0);
  }, 30_000);

  it('a waiting call cancelled by notifications/cancelled, or by its session ending, leaves the queue: no leaked place', async () => {
    const alice = await openAs(gw.url, 'alice');
    const running = [hold('alice', alice, 'c1'), hold('alice', alice, 'c1')];
    const waiting = [hold('alice', alice, 'c1'), hold('alice', alice, 'c1')];
    await settled({ inFlight: SHARE, queued: 2 });
    const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: waiting[0]!.id } };
    expect((await post(gw.url, cancelled, headersOf('alice', alice))).status).toBe(202);
    await settled({ inFlight: SHARE, queued: 1 });
    expect((await waiting[0]!.reply).json.error).toMatchObject({ data: { type: 'REQUEST_CANCELLED' } });

    // Another session of Alice's, ended while its call waits: the call leaves the queue too.
    const other = await openAs(gw.url, 'alice');
    const gone = hold('alice', other, 'c1');
    await settled({ inFlight: SHARE, queued: 2 });
    await fetch(gw.url, { method: 'DELETE', headers: headersOf('alice', other) });
    await settled({ inFlight: SHARE, queued: 1 });
    await gone.reply;

    held.release('c1');
    for (const c of [...running, waiting[1]!]) expect(toolText((await c.reply).json.result)).toBe('released c1');
    await settled({ inFlight: 0, queued: 0 });
    expect(internals(gw.gateway.server).inFlight).toBe(0);
  }, 30_000);

  it('a stateless waiting call whose client disconnects leaves the queue (its principal counted with the sessions)', async () => {
    const alice = await openAs(gw.url, 'alice');
    const running = [hold('alice', alice, 'f1'), hold('alice', alice, 'f1')];
    await settled({ inFlight: SHARE, queued: 0 });
    const { body, headers } = statelessRequest(nextId++, 'tools/call', {
      name: 'held__hold',
      arguments: { key: 'f1' },
    });
    const abort = new AbortController();
    const sent = fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers, ...bearer(keyOf('alice')) },
      body: JSON.stringify(body),
      signal: abort.signal,
    }).catch((err: unknown) => err);
    await settled({ inFlight: SHARE, queued: 1 });
    abort.abort();
    await sent;
    await settled({ inFlight: SHARE, queued: 0 });
    held.release('f1');
    for (const c of running) expect(toolText((await c.reply).json.result)).toBe('released f1');
    await settled({ inFlight: 0, queued: 0 });
    expect(internals(gw.gateway.server).inFlight).toBe(0);
  }, 30_000);

  it('call_tool and a task take a place of the principal as the tool they run', async () => {
    const alice = await openAs(gw.url, 'alice');
    const through = hold('alice', alice, 'd1', true);
    await settled({ inFlight: 1, queued: 0 });
    const tasks = await legacySession(gw, bearer(keyOf('alice')));
    const created = await tasks('tools/call', { name: 'held__hold', arguments: { key: 'd1' }, task: {} });
    expect(created.result.task.status).toBe('working');
    await settled({ inFlight: SHARE, queued: 0 });
    // Alice's share is full now: her next call, either way, waits.
    const third = hold('alice', alice, 'd1', true);
    await settled({ inFlight: SHARE, queued: 1 });
    held.release('d1');
    expect(toolText((await through.reply).json.result)).toBe('released d1');
    expect(toolText((await third.reply).json.result)).toBe('released d1');
    await settled({ inFlight: 0, queued: 0 });
    await tasks.end();
  }, 30_000);

  it('a reload that raises the share lets the next calls go; one that removes fairness lets every call go', async () => {
    const alice = await openAs(gw.url, 'alice');
    const before = [0, 1, 2].map(() => hold('alice', alice, 'e1'));
    await settled({ inFlight: SHARE, queued: 1 });
    gw.file.write(config({ maxInFlightPerPrincipal: 4, queue: 0 }));
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    // The waiting call goes first (it came before), then the new one: 4 in flight, and the fifth is refused (queue 0).
    const after = hold('alice', alice, 'e1');
    await settled({ inFlight: 4, queued: 0 });
    const refused = await hold('alice', alice, 'e1').reply;
    expect(refused.json.error).toMatchObject({ data: { type: 'FAIRNESS_QUEUE_FULL' } });

    gw.file.write(config(undefined));
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    const free = [0, 1, 2].map(() => hold('alice', alice, 'e1'));
    await until('7 held calls at the upstream', async () => {
      const res = await fetch(new URL('/readyz', gw.base));
      return res.ok && internals(gw.gateway.server).inFlight === 7;
    });
    // Without fairness nothing waits; calls are still counted while some of before the reload hold places.
    expect(shares()).toEqual({ inFlight: 7, queued: 0 });
    held.release('e1');
    for (const c of [...before, after, ...free]) expect(toolText((await c.reply).json.result)).toBe('released e1');
    expect(shares()).toEqual({ inFlight: 0, queued: 0 });
    // Nothing counted any more: a call now takes no share at all.
    const plain = hold('alice', alice, 'e2');
    await until('the plain call at the upstream', () => internals(gw.gateway.server).inFlight === 1);
    expect(shares()).toEqual({ inFlight: 0, queued: 0 });
    held.release('e2');
    expect(toolText((await plain.reply).json.result)).toBe('released e2');
  }, 30_000);
});
