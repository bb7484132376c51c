/**
 * A replica is SIGKILLed in the middle of 200 sessions' traffic: sessions live in Redis, so
 * every session carries on at the other replicas; only requests in flight on the dead one
 * fail, each with a closed connection or an error response; none hangs. Then Redis itself
 * restarts mid-load: errors only while it is down, and service resumes without restarting
 * any gateway. Real processes, real Redis, real HTTP on loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, ECHO_SERVER, SLOW_SERVER, isAlive } from '../support/gateway.js';
import { childrenOf, spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
let dataDir: string;
const replicas: GatewayProcess[] = [];
const alive = [true, true, true];

const upstream = (name: string, script: string) => ({
  name,
  transport: 'stdio',
  command: process.execPath,
  args: [script],
  pool: { min: 1, max: 2 },
});

type Outcome =
  { ok: true } | { ok: false; replica: number; kind: 'network' | 'rpc' | 'hung'; status?: number; code?: number };

async function call(replica: number, sid: string, id: number): Promise<Outcome> {
  try {
    const res = await fetch(replicas[replica]!.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'slow__sleep', arguments: { ms: 20, steps: 0 } },
      }),
      signal: AbortSignal.timeout(15_000),
    });
    const body = (await res.json()) as { result?: { content: Array<{ text: string }> }; error?: { code: number } };
    if (res.status === 200 && body.result?.content[0]?.text === 'slept 20ms') return { ok: true };
    return { ok: false, replica, kind: 'rpc', status: res.status, code: body.error?.code };
  } catch (err) {
    const hung = (err as Error).name === 'TimeoutError';
    return { ok: false, replica, kind: hung ? 'hung' : 'network' };
  }
}

async function openSession(replica: number): Promise<string> {
  const res = await fetch(replicas[replica]!.url, {
    method: 'POST',
    headers: MCP_HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'load', version: '1' } },
    }),
  });
  await res.text();
  return res.headers.get('mcp-session-id')!;
}

/** The load balancer: the next live replica after `start`. */
function pick(start: number): number {
  for (let i = 0; i < 3; i++) {
    const r = (start + i) % 3;
    if (alive[r]) return r;
  }
  throw new Error('no live replica');
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'mcpgw-redis-'));
  // Append-only file on: a restarted Redis still has the sessions, as a production one would.
  redis = await startRedis({ args: ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dataDir] });
  const config = {
    sessions: { redisUrl: redis.url, ttlSeconds: 600 },
    upstreams: [upstream('echo', ECHO_SERVER), upstream('slow', SLOW_SERVER)],
  };
  replicas.push(...(await startReplicas(3, config, spawnGateway)));
}, 90_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('replica and Redis failures under load', () => {
  it('SIGKILL of one replica: sessions continue elsewhere, nothing hangs, only its in-flight requests fail', async () => {
    const sessions = await Promise.all(Array.from({ length: 200 }, (_, i) => openSession(i % 3)));
    expect(new Set(sessions).size).toBe(200);
    const victim = 1;
    const victimChildren = childrenOf(replicas[victim]!.pid);
    expect(victimChildren.length).toBeGreaterThan(0);

    // Each session is served BEFORE times before the kill (however unevenly a loaded machine
    // serves them, none has run out of rounds by then) and makes AFTER requests once it has.
    const BEFORE = 2;
    const AFTER = 10;
    const outcomes: Outcome[] = [];
    const served = sessions.map(() => 0);
    const afterKill: Outcome[][] = sessions.map(() => []);
    let killed = false;
    const traffic = sessions.map(async (sid, s) => {
      for (let k = 0; afterKill[s]!.length < AFTER; k++) {
        const wasKilled = killed;
        const outcome = await call(pick(s + k), sid, k + 1);
        outcomes.push(outcome);
        served[s]!++;
        if (wasKilled) afterKill[s]!.push(outcome);
      }
    });
    await until('every session served before the kill', () => served.every((n) => n >= BEFORE), 60_000, 5);
    replicas[victim]!.kill9();
    killed = true;
    alive[victim] = false;
    await Promise.all(traffic);

    expect(outcomes.length).toBeGreaterThanOrEqual(200 * (BEFORE + AFTER));
    const failures = outcomes.filter((o): o is Extract<Outcome, { ok: false }> => !o.ok);
    expect(failures.filter((f) => f.kind === 'hung')).toEqual([]);
    // Every failure was a request the dead replica held.
    expect(failures.every((f) => f.replica === victim)).toBe(true);
    // Every session made all its requests after the kill on the survivors, and each was answered.
    for (const list of afterKill) {
      expect(list).toHaveLength(AFTER);
      expect(list.every((o) => o.ok)).toBe(true);
    }
    // The dead replica's upstream processes did not outlive it (their stdin closed).
    await until("the dead replica's upstream processes to exit", () => !victimChildren.some(isAlive), 30_000, 50).catch(
      () => undefined,
    );
    expect(victimChildren.filter(isAlive)).toEqual([]);
  }, 120_000);

  it('Redis restarted mid-load: errors only while it is down, then recovery without restarting a gateway', async () => {
    const live = [0, 2];
    const sessions = await Promise.all(Array.from({ length: 20 }, (_, i) => openSession(live[i % 2]!)));
    type Phase = 'before' | 'down' | 'after';
    let phase = 'before' as Phase;
    const results: Array<{ phase: Phase; outcome: Outcome }> = [];
    let stop = false;
    const traffic = sessions.map(async (sid, s) => {
      for (let k = 0; !stop; k++) {
        const at = phase;
        const outcome = await call(live[(s + k) % 2]!, sid, k + 1);
        // A request that saw the phase change counts as "down": it may have met the outage.
        results.push({ phase: at === phase ? at : 'down', outcome });
        await new Promise((r) => setTimeout(r, 10));
      }
    });
    // Each phase lasts until enough requests have been answered in it (counts, not times: a
    // loaded machine answers fewer per second).
    const inPhase = (p: Phase) => results.filter((r) => r.phase === p);
    const storeReady = async (r: number) => (await fetch(new URL('/readyz', replicas[r]!.url))).status === 200;
    await until('requests served before the outage', () => inPhase('before').length > 20, 60_000);
    phase = 'down';
    await redis.stop();
    // Down until both replicas have seen it (their /readyz says so) and requests have met it.
    await until(
      'both replicas to see Redis down',
      async () => !(await storeReady(0)) && !(await storeReady(2)),
      30_000,
      20,
    );
    await until('a request to meet the outage', () => inPhase('down').some((r) => !r.outcome.ok), 30_000);
    await redis.start();
    // The replicas' clients reconnect with backoff: "after" starts once both report their store
    // ready again (/readyz), however long that took on this machine.
    await until('both replicas ready again', async () => (await storeReady(0)) && (await storeReady(2)), 30_000, 50);
    phase = 'after';
    await until('requests answered after recovery', () => inPhase('after').length > 20, 60_000);
    stop = true;
    await Promise.all(traffic);

    const [before, down, after] = [inPhase('before'), inPhase('down'), inPhase('after')];
    expect(before.length).toBeGreaterThan(20);
    expect(after.length).toBeGreaterThan(20);
    expect(before.every((r) => r.outcome.ok)).toBe(true);
    expect(after.every((r) => r.outcome.ok)).toBe(true);
    // While Redis was down the errors were the typed, retryable 503, never a hang.
    const downFailures = down.map((r) => r.outcome).filter((o): o is Extract<Outcome, { ok: false }> => !o.ok);
    expect(downFailures.length).toBeGreaterThan(0);
    expect(downFailures.every((f) => f.kind === 'rpc' && f.status === 503 && f.code === -32010)).toBe(true);
  }, 180_000);
});
