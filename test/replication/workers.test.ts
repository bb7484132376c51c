/**
 * `cluster.workers`: one gateway process (the primary) and N workers on one port, sessions in
 * Redis. A session opened through one worker is served by the other; SIGHUP to the primary
 * reloads every worker; SIGTERM drains them all and the primary exits 0. The memory store
 * refuses more than one worker. Real processes, real Redis, a new TCP connection per request
 * (the primary hands connections to the workers in turn).
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, MCP_HEADERS, isAlive } from '../support/gateway.js';
import { childrenOf, runGatewayToExit, spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { configFile } from '../support/reload.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
let gw: GatewayProcess;
let file: ReturnType<typeof configFile>;

const echo = (extra: Record<string, unknown> = {}) => ({
  name: 'echo',
  transport: 'stdio',
  command: process.execPath,
  args: [ECHO_SERVER],
  pool: { min: 1, max: 1 },
  ...extra,
});
const config = (extra: Record<string, unknown> = {}) => ({
  logLevel: 'warn',
  cluster: { workers: 2 },
  reload: { watch: false },
  sessions: { store: 'redis', redisUrl: redis.url, ttlSeconds: 600 },
  upstreams: [echo(extra)],
});

/** One POST on a connection of its own (no keep-alive): each may reach either worker. */
function postFresh(
  url: URL,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { ...MCP_HEADERS, connection: 'close', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, json: text ? JSON.parse(text) : undefined }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};

/** The primary's workers (its children running main.js). */
function gatewayWorkers(): number[] {
  return childrenOf(gw.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('main.js');
    } catch {
      return false;
    }
  });
}

async function openSession(): Promise<string> {
  const res = await postFresh(gw.url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  expect(res.status).toBe(200);
  const sid = res.headers['mcp-session-id'] as string;
  await postFresh(
    gw.url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
  return sid;
}

/** The worker (gateway process) that served a tools/call: the parent of the echo process that answered. */
async function servingWorker(sid: string, tool: string, id: number): Promise<number> {
  const res = await postFresh(
    gw.url,
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: {} } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  expect(res.json.error).toBeUndefined();
  return parentOf((JSON.parse(res.json.result.content[0].text) as { pid: number }).pid);
}

beforeAll(async () => {
  redis = await startRedis();
  file = configFile(config());
  gw = await spawnGateway({}, { configFile: file.file });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  file?.remove();
  await redis?.stop();
});

describe('cluster.workers', () => {
  it('2 workers serve one port: a session opened on one is served by both', async () => {
    const workers = gatewayWorkers();
    expect(workers).toHaveLength(2);
    const sid = await openSession();
    const served = new Set<number>();
    for (let i = 1; i <= 8; i++) served.add(await servingWorker(sid, 'echo__whoami', i));
    expect([...served].sort()).toEqual([...workers].sort());
  });

  it('SIGHUP to the primary reloads every worker', async () => {
    file.write(config({ prefix: 'again' }));
    process.kill(gw.pid, 'SIGHUP');
    const sid = await openSession();
    const served = new Set<number>();
    // Each worker answers under the new prefix only once it reloaded.
    await until(
      'both workers answer under the new prefix',
      async () => {
        for (let i = 0; i < 4; i++) {
          const res = await postFresh(
            gw.url,
            { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'again__whoami', arguments: {} } },
            { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
          );
          if (res.json?.result)
            served.add(parentOf((JSON.parse(res.json.result.content[0].text) as { pid: number }).pid));
        }
        return served.size === 2;
      },
      15_000,
    );
    expect(served.size).toBe(2);
  });

  it('a worker that dies is replaced; its sessions carry on at the other', async () => {
    const sid = await openSession();
    const before = gatewayWorkers();
    process.kill(before[0]!, 'SIGKILL');
    await until(
      'a new worker serves',
      () => {
        const now = gatewayWorkers();
        return now.length === 2 && !now.includes(before[0]!);
      },
      20_000,
    );
    const served = new Set<number>();
    await until(
      'both workers answer',
      async () => {
        served.add(await servingWorker(sid, 'again__whoami', 99));
        return served.size === 2;
      },
      20_000,
    );
  });

  it('SIGTERM: every worker drains and exits, then the primary, with 0', async () => {
    const workers = childrenOf(gw.pid);
    expect(workers.length).toBeGreaterThan(0);
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    for (const pid of workers) expect(isAlive(pid)).toBe(false);
  });

  it('the memory store allows one worker only: more (or "auto") is a config error', async () => {
    for (const workers of [2, 'auto']) {
      const { code, stderr } = await runGatewayToExit({ cluster: { workers }, upstreams: [echo()] }, 20_000);
      expect(code).toBe(2);
      expect(stderr).toContain('cluster.workers');
      expect(stderr).toContain('needs sessions.store redis');
    }
    const { code, stderr } = await runGatewayToExit({ cluster: { workers: 0 }, upstreams: [echo()] }, 20_000);
    expect(code).toBe(2);
    expect(stderr).toContain('cluster');
  });
});
