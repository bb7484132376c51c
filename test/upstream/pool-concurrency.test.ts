/**
 * Many sessions, one small pool: 50 concurrent sessions × 20 echo calls (200 in flight at a time)
 * through an upstream of at most 2 workers. Every reply must be the answer to its own request (the gateway remaps ids
 * on shared worker connections: any mix-up shows as a wrong id or a wrong text).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  MCP_HEADERS,
  exampleConfig,
  isAlive,
  openSession,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { internals } from '../../src/gateway/internals.js';

const SESSIONS = 50;
const CALLS_PER_SESSION = 20;
const LANES = 4;
const PROTOCOL = '2025-06-18';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('echo', ECHO_SERVER, {
          // The queue must hold the whole burst (1000 - 2 × 32 in flight) for as long as a loaded
          // CI machine needs to work through it; bounds are not what this test is about.
          pool: { min: 1, max: 2, maxInFlight: 32, queueSize: 2000, queueTimeoutMs: 60_000 },
        }),
      ],
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
});

/** One tools/call over HTTP; the reply is JSON (no progress token, so never SSE). */
async function callTool(
  sid: string,
  id: number | string,
  name: string,
  args: Record<string, unknown>,
): Promise<{ status: number; body: any }> {
  const res = await fetch(gw.url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { unparsable: text };
  }
  return { status: res.status, body };
}

function textOf(result: unknown): string | undefined {
  const content = (result as { content?: Array<{ type: string; text?: string }> } | undefined)?.content;
  return Array.isArray(content) ? content.map((c) => c.text ?? '').join('') : undefined;
}

async function whoami(sid: string, id: number | string): Promise<number> {
  const { status, body } = await callTool(sid, id, 'echo__whoami', {});
  expect(status).toBe(200);
  expect(body.id).toBe(id);
  const pid = JSON.parse(textOf(body.result) ?? 'null')?.pid;
  expect(typeof pid).toBe('number');
  return pid as number;
}

describe('shared pool under concurrency', () => {
  it(`answers ${SESSIONS} concurrent sessions × ${CALLS_PER_SESSION} calls, each with its own reply, from at most 2 workers`, async () => {
    const sids = await Promise.all(Array.from({ length: SESSIONS }, () => openSession(gw.url, PROTOCOL)));
    expect(new Set(sids).size).toBe(SESSIONS);

    const pids = new Set<number>();
    const mismatches: string[] = [];
    let responses = 0;
    let errors = 0;

    const check = (i: number, j: number) => {
      // Ids repeat across sessions on purpose: only the gateway's remapping keeps them apart.
      const id = j + 1;
      const text = `s${i}-c${j}`;
      return callTool(sids[i]!, id, 'echo__echo', { text }).then(({ status, body }) => {
        responses++;
        if (status !== 200 || body.error !== undefined || body.result === undefined) {
          errors++;
          mismatches.push(`${text}: status ${status}, ${JSON.stringify(body).slice(0, 200)}`);
          return;
        }
        if (body.jsonrpc !== '2.0' || body.id !== id)
          mismatches.push(`${text}: id ${JSON.stringify(body.id)}, expected ${id}`);
        const got = textOf(body.result);
        if (got !== text) mismatches.push(`${text}: got text ${JSON.stringify(got)}`);
      });
    };

    // Every session keeps LANES calls in flight until its 20 are done: 200 requests in flight
    // at once, far more than the pool's 2 × 32 slots, without opening 1000 sockets at once
    // (which overflows the listen backlog of a loaded machine and turns into connect timeouts).
    const calls: Array<Promise<void>> = [];
    for (let i = 0; i < SESSIONS; i++) {
      for (let lane = 0; lane < LANES; lane++) {
        calls.push(
          (async () => {
            for (let j = lane; j < CALLS_PER_SESSION; j += LANES) await check(i, j);
          })(),
        );
      }
      // Some whoami calls in the middle of the burst, to see every worker that serves it.
      calls.push(whoami(sids[i]!, `who-${i}`).then((pid) => void pids.add(pid)));
    }
    await Promise.all(calls);

    expect(mismatches.slice(0, 10)).toEqual([]);
    expect(responses).toBe(SESSIONS * CALLS_PER_SESSION);
    expect(errors).toBe(0);

    // And after the burst, from every session at once.
    const after = await Promise.all(sids.map((sid, i) => whoami(sid, 1000 + i)));
    for (const pid of after) pids.add(pid);

    expect(pids.size).toBeGreaterThanOrEqual(1);
    expect(pids.size).toBeLessThanOrEqual(2);
    for (const pid of pids) {
      expect(pid).not.toBe(process.pid);
      expect(isAlive(pid), `worker ${pid}`).toBe(true);
    }

    const ready = await fetch(new URL('/readyz', gw.base));
    expect(ready.status).toBe(200);
    const status = (await ready.json()) as {
      upstreams: Record<string, { workers: number; inFlight: number; queued: number }>;
    };
    expect(status.upstreams.echo!.workers).toBeGreaterThanOrEqual(1);
    expect(status.upstreams.echo!.workers).toBeLessThanOrEqual(2);
    expect(status.upstreams.echo!.inFlight).toBe(0);
    expect(status.upstreams.echo!.queued).toBe(0);
    expect(internals(gw.gateway.server).inFlight).toBe(0);
  }, 120_000); // 1050 HTTP round trips: generous for a loaded 2-core CI machine (not a speed test)
});
