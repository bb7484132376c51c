/**
 * pool.spares for per-session stdio upstreams: processes started ahead, each taken by the next
 * session (or stateless request) and initialized with that client's identity; refilled after
 * use, not after a crash; all stopped with the gateway. Counted from /proc: real child processes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  SLOW_SERVER,
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { childPidsRunning } from '../support/child-processes.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const slowChildren = (): number[] => childPidsRunning(SLOW_SERVER);

let gw: RunningGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  expect(slowChildren()).toEqual([]);
});

async function pidOf(sid: string): Promise<number> {
  const r = await post(
    gw!.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mine__pid', arguments: {} } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
  return JSON.parse(r.json.result.content[0].text).pid as number;
}

describe('per-session spares', () => {
  it('runs `spares` processes ahead; a new session gets one of them, and another is started', async () => {
    gw = await startGateway(
      exampleConfig({ upstreams: [stdioUpstream('mine', SLOW_SERVER, { mode: 'per-session', pool: { spares: 2 } })] }),
    );
    await until('two spares', () => slowChildren().length === 2);
    const spares = slowChildren();
    const pid = await pidOf(await openSession(gw.url));
    expect(spares).toContain(pid);
    expect(internals(gw.gateway.server).perSessionWorkers('mine')).toBe(1);
    await until('the spare taken to be replaced', () => slowChildren().length === 3);
  });

  it('spares: 0 starts nothing ahead', async () => {
    gw = await startGateway(
      exampleConfig({ upstreams: [stdioUpstream('mine', SLOW_SERVER, { mode: 'per-session', pool: { spares: 0 } })] }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(slowChildren()).toEqual([]);
    const pid = await pidOf(await openSession(gw.url));
    expect(slowChildren()).toEqual([pid]);
  });

  it('a spare killed while it waits is dropped, not restarted in a loop; the next session still gets a worker', async () => {
    gw = await startGateway(
      exampleConfig({ upstreams: [stdioUpstream('mine', SLOW_SERVER, { mode: 'per-session', pool: { spares: 1 } })] }),
    );
    await until('a spare', () => slowChildren().length === 1);
    const [spare] = slowChildren();
    process.kill(spare!, 'SIGKILL');
    await until('the dead spare gone', () => slowChildren().length === 0);
    await new Promise((r) => setTimeout(r, 300));
    expect(slowChildren()).toEqual([]);
    const pid = await pidOf(await openSession(gw.url));
    expect(pid).not.toBe(spare);
    await until('a new spare after that session started', () => slowChildren().length === 2);
  });
});
