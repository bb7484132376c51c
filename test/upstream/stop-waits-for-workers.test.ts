/**
 * A gateway's stop returns once its per-session workers' processes are gone, those already
 * stopping included (a session that ended just before), and its probes' (a catalog refresh's).
 * The upstream here does not exit on stdin EOF, as server-everything does not while a request of
 * its own waits for its client (roots/list, an elicitation): its worker is stopped by signal
 * after the grace. A stop that returned sooner left such processes running past the test file,
 * re-parented to init. Real gateway, real child processes, loopback.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPidsRunning } from '../support/child-processes.js';
import { exampleConfig, MCP_HEADERS, openSession, post, startGateway, stdioUpstream } from '../support/gateway.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';
import { until } from '../support/wait.js';

const STUBBORN = `${rawStdioServer(
  `if (m.method === 'initialize') return { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stubborn', version: '1' } };
  if (m.method === 'tools/list') return { tools: [{ name: 'hello', inputSchema: { type: 'object' } }, { name: 'changed', inputSchema: { type: 'object' } }] };
  if (m.method === 'tools/call') return { content: [{ type: 'text', text: m.params.name + ' ' + process.pid }] };
  return {};`,
  '',
  // A call to `changed` first says its tools changed: the gateway probes the upstream again.
  `if (m.method === 'tools/call' && m.params.name === 'changed') send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });`,
)}
// EOF does not end it: a timer keeps it alive until a signal does.
process.stdin.removeAllListeners('end');
setInterval(() => undefined, 60_000);
`;

let dir: string;
let script: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-stop-'));
  script = join(dir, 'stubborn.mjs');
  writeFileSync(script, STUBBORN);
});

afterAll(() => {
  for (const pid of childPidsRunning(script)) process.kill(pid, 'SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function sessionWithWorker(url: URL, tool = 'hello'): Promise<{ sid: string; pid: number }> {
  const sid = await openSession(url);
  const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
  const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: `stub__${tool}`, arguments: {} } };
  const res = await post(url, body, headers);
  const pid = Number(/(?:hello|changed) (\d+)/.exec(res.text)?.[1]);
  expect(alive(pid), res.text).toBe(true);
  return { sid, pid };
}

describe('stop waits for every per-session worker process', () => {
  it('a session ended just before stop: its worker, still stopping, is gone when stop returns', async () => {
    const gw = await startGateway(
      exampleConfig({ upstreams: [stdioUpstream('stub', script, { mode: 'per-session', pool: { spares: 0 } })] }),
    );
    const { sid, pid } = await sessionWithWorker(gw.url);
    const deleted = await fetch(gw.url, {
      method: 'DELETE',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(deleted.status).toBeLessThan(300);
    await gw.stop();
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it('a session still open at stop: its worker is gone when stop returns', async () => {
    const gw = await startGateway(
      exampleConfig({ upstreams: [stdioUpstream('stub', script, { mode: 'per-session', pool: { spares: 0 } })] }),
    );
    const { pid } = await sessionWithWorker(gw.url);
    await gw.stop();
    expect(alive(pid)).toBe(false);
    await until('no stub process left', () => childPidsRunning(script).length === 0);
  }, 30_000);

  it("a probe running at stop (a catalog refresh after a worker's list_changed) is gone when stop returns", async () => {
    const gw = await startGateway(
      exampleConfig({ upstreams: [stdioUpstream('stub', script, { mode: 'per-session', pool: { spares: 0 } })] }),
    );
    await until('the start-up probe gone', () => childPidsRunning(script).length === 0);
    const { pid } = await sessionWithWorker(gw.url, 'changed');
    await until('the refresh probe running beside the worker', () => childPidsRunning(script).length === 2);
    const probe = childPidsRunning(script).find((p) => p !== pid)!;
    await gw.stop();
    expect(alive(probe)).toBe(false);
    expect(alive(pid)).toBe(false);
  }, 30_000);
});
