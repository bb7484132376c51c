/**
 * A remote upstream killed mid-load (kill -9 of examples/echo-http): every caller gets a typed
 * error within timeoutMs, never a hang; the circuit opens and calls fail fast; the upstream's
 * tools leave the merged list with list_changed on the client's GET stream while the other
 * upstream keeps working; and when the upstream is back on its port, everything recovers.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  exampleConfig,
  startGateway,
  stdioUpstream,
  toolText,
  type RunningGateway,
} from '../support/gateway.js';
import { httpUpstream, startEchoHttp, type HttpServerProcess } from '../support/http-upstream.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const TIMEOUT_MS = 3000;

let remote: HttpServerProcess;
let port: number;
let gw: RunningGateway;
let client: Client;
let listChanged = 0;

interface Outcome {
  ok: boolean;
  type?: string;
  retryAfterMs?: unknown;
  ms: number;
}

async function call(name: string, args: Record<string, unknown>): Promise<Outcome> {
  const started = performance.now();
  try {
    await client.callTool({ name, arguments: args });
    return { ok: true, ms: performance.now() - started };
  } catch (err) {
    const data =
      err instanceof McpError ? (err.data as { type?: string; retryAfterMs?: unknown } | undefined) : undefined;
    return {
      ok: false,
      type: data?.type ?? String(err),
      retryAfterMs: data?.retryAfterMs,
      ms: performance.now() - started,
    };
  }
}

async function ready(): Promise<{ status: number; remote: Record<string, unknown> }> {
  const res = await fetch(new URL('/readyz', gw.base));
  const body = (await res.json()) as { upstreams: Record<string, Record<string, unknown>> };
  return { status: res.status, remote: body.upstreams.remote! };
}

const toolNames = async () => (await client.listTools()).tools.map((t) => t.name);

beforeAll(async () => {
  remote = await startEchoHttp();
  port = remote.port;
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('local', ECHO_SERVER),
        httpUpstream('remote', remote.url, { timeoutMs: TIMEOUT_MS, pool: { min: 1, max: 2 }, required: true }),
      ],
    }),
  );
  client = new Client({ name: 'outage', version: '1.0.0' });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged++;
  });
  await client.connect(new StreamableHTTPClientTransport(gw.url));
  // The SDK client opens its GET stream after initialize; list_changed arrives there.
  await new Promise((r) => setTimeout(r, 300));
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.stop();
  await remote?.stop();
});

describe('a remote upstream killed mid-load', () => {
  it('fails every call in flight or made during the outage with a typed error within timeoutMs, and opens the circuit', async () => {
    expect(await toolNames()).toEqual(expect.arrayContaining(['local__echo', 'remote__echo', 'remote__sleep']));
    const outcomes: Outcome[] = [];
    let stop = false;
    const loops = Array.from({ length: 8 }, async () => {
      while (!stop) outcomes.push(await call('remote__sleep', { ms: 150 }));
    });
    await until('some calls succeed', async () => outcomes.filter((o) => o.ok).length >= 8, 15_000);
    await remote.kill();
    await until('the circuit opens', async () => (await ready()).remote.circuit !== 'closed', 15_000);
    // Keep the load on for a moment with the circuit open: those calls must fail fast.
    const openAt = outcomes.length;
    await until('calls fail while open', async () => outcomes.length >= openAt + 16, 15_000);
    stop = true;
    await Promise.all(loops);

    const failures = outcomes.filter((o) => !o.ok);
    expect(failures.length).toBeGreaterThan(0);
    const types = new Set(failures.map((f) => f.type));
    for (const type of types)
      expect(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_CIRCUIT_OPEN', 'UPSTREAM_TIMEOUT']).toContain(type);
    expect(types).toContain('UPSTREAM_CIRCUIT_OPEN');
    // Correctness bounds (no call waits past its timeout), not speed benchmarks.
    for (const f of failures) expect(f.ms).toBeLessThan(TIMEOUT_MS + 1000);
    const open = failures.find((f) => f.type === 'UPSTREAM_CIRCUIT_OPEN')!;
    expect(open.retryAfterMs).toBeTypeOf('number');
    expect(internals(gw.gateway.server).inFlight).toBe(0);
  });

  it('reports the upstream down in /readyz, drops its tools with list_changed, and keeps the other upstream working', async () => {
    const r = await ready();
    expect(r.status).toBe(503);
    expect(r.remote.state).toBe('down');
    expect(['open', 'half-open']).toContain(r.remote.circuit);
    await until('list_changed reached the client', async () => listChanged > 0, 15_000);
    const names = await toolNames();
    expect(names.some((n) => n.startsWith('remote__'))).toBe(false);
    expect(names).toContain('local__echo');
    expect(toolText(await client.callTool({ name: 'local__echo', arguments: { text: 'still here' } }))).toBe(
      'still here',
    );
    // A client that still knows the name gets the upstream's fail-fast error, not "unknown tool".
    const stale = await call('remote__echo', { text: 'x' });
    expect(stale.ok).toBe(false);
    expect(['UPSTREAM_CIRCUIT_OPEN', 'UPSTREAM_UNAVAILABLE']).toContain(stale.type);
  });

  it('recovers when the upstream is back: circuit closed, tools listed again with list_changed, calls work', async () => {
    const before = listChanged;
    remote = await startEchoHttp(port);
    await until('its tools are listed again', async () => (await toolNames()).includes('remote__echo'), 15_000);
    expect(listChanged).toBeGreaterThan(before);
    await until('ready again', async () => (await ready()).status === 200, 15_000);
    expect((await ready()).remote).toMatchObject({ state: 'ready', circuit: 'closed' });
    const who = JSON.parse(toolText(await client.callTool({ name: 'remote__whoami', arguments: {} }))) as {
      pid: number;
    };
    expect(who.pid).toBe(remote.pid);
    const again = await call('remote__sleep', { ms: 10 });
    expect(again.ok).toBe(true);
  });
});
