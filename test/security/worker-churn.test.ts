/**
 * Session churn does not become process churn. A per-session upstream (server-everything, a real
 * stdio process per session) has every start counted by a preload that writes the pid to a file.
 *
 * A new session's call that needs no worker of its own starts none: initialize → tools/call of an
 * unknown tool → DELETE, in a loop, starts no process and is answered INVALID_PARAMS from the
 * catalog. And a client that opens session after session making real calls gets, past
 * limits.workerStartsPerMinute, a typed retryable refusal (WORKER_START_LIMIT with retryAfterMs)
 * before it can take a slot: another principal's worker is not evicted and keeps serving.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SPACED_REFRESH_MS } from '../../src/gateway/catalog-manager.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  MCP_HEADERS,
  exampleConfig,
  isAlive,
  post,
  startGateway,
  toolText,
  type RunningGateway,
} from '../support/gateway.js';
import { EVERYTHING, everythingUpstream } from '../support/everything.js';
import { childPidsRunning, countedStarts, startsIn } from '../support/child-processes.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const VERSION = '2025-06-18';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-churn-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function countedEverything(file: string, extra: Record<string, unknown>): Record<string, unknown> {
  return everythingUpstream('ev', { ...countedStarts(EVERYTHING, file, ['stdio']), mode: 'per-session', ...extra });
}

async function initialize(gw: RunningGateway, auth: Record<string, string> = {}): Promise<string> {
  const r = await post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'churn', version: '1' } },
    },
    auth,
  );
  expect(r.status, r.text).toBe(200);
  const sid = r.headers.get('mcp-session-id')!;
  await post(
    gw.url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': VERSION },
  );
  return sid;
}

function callTool(
  gw: RunningGateway,
  sid: string,
  id: number,
  name: string,
  args: Record<string, unknown>,
  auth: Record<string, string> = {},
) {
  return post(
    gw.url,
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
    { ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': VERSION },
  );
}

async function remove(gw: RunningGateway, sid: string, auth: Record<string, string> = {}): Promise<void> {
  const r = await fetch(gw.url, {
    method: 'DELETE',
    headers: { ...MCP_HEADERS, ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': VERSION },
  });
  expect(r.status).toBe(200);
}

describe('a call that needs no per-session worker', () => {
  let gw: RunningGateway;
  const starts = () => join(dir, 'unknown-tool');

  beforeAll(async () => {
    // Spares as shipped (one process started ahead).
    gw = await startGateway(exampleConfig({ upstreams: [countedEverything(starts(), {})] }));
    await until('the probe and the spare started', () => startsIn(starts()).started === 2);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('initialize → tools/call of an unknown tool → DELETE, in a loop, starts no process and gets INVALID_PARAMS "Unknown tool"', async () => {
    const before = startsIn(starts()).started;
    for (let i = 0; i < 12; i++) {
      const sid = await initialize(gw);
      const r = await callTool(gw, sid, 1, 'nope', {});
      expect(r.status).toBe(200);
      expect(r.json.error).toMatchObject({
        code: -32602,
        message: 'Unknown tool: nope',
        data: { type: 'INVALID_PARAMS' },
      });
      await remove(gw, sid);
    }
    expect(internals(gw.gateway.server).perSessionWorkers('ev')).toBe(0);
    // Any start would be on file by now: a process writes its pid before it reads a line.
    await new Promise((r) => setTimeout(r, 300));
    expect(startsIn(starts()).started - before).toBe(0);
    expect(childPidsRunning(EVERYTHING)).toHaveLength(1); // the spare

    // A call that does need one still gets it (the spare).
    const sid = await initialize(gw);
    const r = await callTool(gw, sid, 1, 'ev__echo', { message: 'known' });
    expect(toolText(r.json.result), r.text).toBe('Echo: known');
    expect(internals(gw.gateway.server).perSessionWorkers('ev')).toBe(1);
    await remove(gw, sid);
    await until('its worker stopped', () => internals(gw.gateway.server).perSessionWorkers('ev') === 0);
  });
});

describe("a task of a shared upstream's tool", () => {
  let gw: RunningGateway;
  const starts = () => join(dir, 'task-call');

  beforeAll(async () => {
    const echo = {
      name: 'echo',
      transport: 'stdio',
      command: process.execPath,
      args: [ECHO_SERVER],
      tasks: { tools: ['echo'] },
    };
    gw = await startGateway(
      exampleConfig({ upstreams: [echo, countedEverything(starts(), { pool: { spares: 0 } })], tasks: {} }),
    );
    await until('the probe started', () => startsIn(starts()).started === 1);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it("starts no per-session worker of another upstream (the task's call is routed by its tool, as a plain call is)", async () => {
    const before = startsIn(starts()).started;
    for (let i = 0; i < 4; i++) {
      const r = await post(gw.url, {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'churn', version: '1' } },
      });
      const sid = r.headers.get('mcp-session-id')!;
      const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
      await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
      const created = await post(
        gw.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'echo__echo', arguments: { text: 'x' }, task: { ttl: 60_000 } },
        },
        headers,
      );
      const taskId = created.json.result?.task?.taskId as string;
      expect(taskId, created.text).toBeTruthy();
      const got = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId } }, headers);
      expect(toolText(got.json.result), got.text).toBe('x');
      expect(internals(gw.gateway.server).perSessionWorkers('ev')).toBe(0);
      const del = await fetch(gw.url, { method: 'DELETE', headers: { ...MCP_HEADERS, ...headers } });
      expect(del.status).toBe(200);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(startsIn(starts()).started - before).toBe(0);
  });
});

describe('limits.workerStartsPerMinute', () => {
  const PER_MINUTE = 3;
  let issuer: JwtIssuer;
  let gw: RunningGateway;
  const starts = () => join(dir, 'churn');

  beforeAll(async () => {
    issuer = await startJwtIssuer();
    // Room for the churner's allowance and one other worker: a start past the allowance would evict.
    gw = await startGateway(
      exampleConfig({
        auth: issuer.authConfig,
        limits: { workerStartsPerMinute: PER_MINUTE },
        upstreams: [countedEverything(starts(), { pool: { max: PER_MINUTE + 1, spares: 0 } })],
      }),
    );
    await until('the probe started', () => startsIn(starts()).started === 1);
  });

  afterAll(async () => {
    await gw?.stop();
    await issuer?.close();
  });

  it('past it, new sessions of one principal get WORKER_START_LIMIT (retryable, retryAfterMs); another principal keeps its worker', async () => {
    const bob = await issuer.bearer('bob');
    const bobSession = await initialize(gw, bob);
    expect(toolText((await callTool(gw, bobSession, 1, 'ev__echo', { message: 'bob' }, bob)).json.result)).toBe(
      'Echo: bob',
    );
    const [bobPid] = childPidsRunning(EVERYTHING);
    expect(bobPid).toBeDefined();

    // Clients of one principal that open a session, call, and vanish without DELETE.
    const alice = await issuer.bearer('alice');
    const loopStarted = Date.now();
    const outcomes: string[] = [];
    let retryAfterMs = 0;
    for (let i = 0; i < 10; i++) {
      const sid = await initialize(gw, alice);
      const r = await callTool(gw, sid, 1, 'ev__echo', { message: `alice ${i}` }, alice);
      expect(r.status).toBe(200);
      if (r.json.result) outcomes.push('ok');
      else {
        expect(r.json.error).toMatchObject({ code: -32017, data: { type: 'WORKER_START_LIMIT', retryable: true } });
        retryAfterMs = r.json.error.data.retryAfterMs;
        outcomes.push(r.json.error.data.type);
      }
    }
    expect(outcomes).toEqual([...Array(PER_MINUTE).fill('ok'), ...Array(10 - PER_MINUTE).fill('WORKER_START_LIMIT')]);
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000 / PER_MINUTE);
    // One worker process per allowed start, none for the refused.
    expect(startsIn(starts()).initializedBy('churn')).toBe(1 + PER_MINUTE);
    // server-everything says its tools changed as each worker starts: the catalog probes that
    // follow are spaced (SPACED_REFRESH_MS apart), not one per session: the first, one at once, one per space after.
    expect(startsIn(starts()).initializedBy('mcp-gateway')).toBeLessThanOrEqual(
      3 + Math.floor((Date.now() - loopStarted) / SPACED_REFRESH_MS),
    );

    // Bob's worker was never taken to make room: the same process answers, and nothing started for it.
    expect(isAlive(bobPid!)).toBe(true);
    expect(toolText((await callTool(gw, bobSession, 2, 'ev__echo', { message: 'bob again' }, bob)).json.result)).toBe(
      'Echo: bob again',
    );
    expect(startsIn(starts()).initializedBy('churn')).toBe(1 + PER_MINUTE);
    const readyz = (await (await fetch(`${gw.base}/readyz`)).json()) as {
      upstreams: Record<string, { workers: number; inFlight: number; queued: number }>;
    };
    expect(readyz.upstreams.ev).toMatchObject({ workers: PER_MINUTE + 1, inFlight: 0, queued: 0 });
  });
});
