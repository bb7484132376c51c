/**
 * A per-session worker's list change, seen from every replica: two replicas on one real
 * redis-server, a session whose worker runs on replica A, its lists also read (and kept) on B.
 * The worker adds a tool and says `notifications/tools/list_changed`: the session's lists on B
 * show the new tool at once (they were kept 10 s there before), and the GET streams held on B,
 * the session's own and another session's, hear list_changed as they would on A. Upstream: a raw
 * stdio server whose `grow` tool adds `extra` to its own worker's list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, type RunningGateway } from '../support/gateway.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { SseReader, type SseEvent } from '../support/sse.js';
import { until } from '../support/wait.js';

const GROWING_SERVER = rawStdioServer(
  `if (m.method === 'initialize') return { protocolVersion: m.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'growing', version: '1' } };
  if (m.method === 'tools/list') return { tools: grown ? [base, grow, extra] : [base, grow] };
  if (m.method === 'tools/call') return { content: [{ type: 'text', text: m.params.name + ' ran' }] };
  return {};`,
  `let grown = false;
const tool = (name) => ({ name, inputSchema: { type: 'object' } });
const base = tool('base'), grow = tool('grow'), extra = tool('extra');`,
  `if (m.method === 'tools/call' && m.params.name === 'grow') { grown = true; send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }); }`,
);

const UPSTREAM = { name: 'ups', transport: 'stdio', command: process.execPath, args: ['-e', GROWING_SERVER], mode: 'per-session', pool: { max: 8 } };
const VERSION = '2025-06-18';

let redis: RedisServer;
let replicas: RunningGateway[] = [];
const streams: SseReader[] = [];
let nextId = 1;

async function openSession(gw: RunningGateway): Promise<string> {
  const init = await post(gw.url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'lists', version: '1' } } });
  const sid = init.headers.get('mcp-session-id');
  if (!sid) throw new Error(`initialize failed: ${init.status} ${init.text}`);
  await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid, 'mcp-protocol-version': VERSION });
  return sid;
}

async function rpc(gw: RunningGateway, sid: string, method: string, params: Record<string, unknown> = {}): Promise<any> {
  const res = await post(gw.url, { jsonrpc: '2.0', id: nextId++, method, params }, { 'mcp-session-id': sid, 'mcp-protocol-version': VERSION });
  if (!res.json) throw new Error(`${method}: ${res.status} ${res.text}`);
  return res.json;
}

const toolNames = async (gw: RunningGateway, sid: string): Promise<string[]> => ((await rpc(gw, sid, 'tools/list')).result.tools as Array<{ name: string }>).map((t) => t.name).sort();

async function getStream(gw: RunningGateway, sid: string): Promise<SseReader> {
  const res = await fetch(gw.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': VERSION } });
  expect(res.status).toBe(200);
  const reader = new SseReader(res);
  streams.push(reader);
  return reader;
}

/** The next event on `reader` that carries `method`, within `ms`. */
async function heard(reader: SseReader, method: string, ms: number): Promise<SseEvent> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ev = await reader.next(Math.max(1, deadline - Date.now()));
    if (!ev) throw new Error('stream ended');
    if (ev.data !== '' && (JSON.parse(ev.data) as { method?: string }).method === method) return ev;
  }
}

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(2, { sessions: { redisUrl: redis.url }, upstreams: [UPSTREAM] });
}, 60_000);

afterAll(async () => {
  await Promise.all(streams.map((s) => s.cancel()));
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe("a per-session worker's list change on two replicas", () => {
  it("reaches the session's kept lists and the GET streams on the other replica at once", async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const sid = await openSession(a);
    // Its worker starts on A; B keeps the session's lists (asked of A's worker) for 10 s.
    expect(await toolNames(a, sid)).toEqual(['ups__base', 'ups__grow']);
    expect(await toolNames(b, sid)).toEqual(['ups__base', 'ups__grow']);
    const own = await getStream(b, sid);
    const otherSid = await openSession(b);
    const other = await getStream(b, otherSid);

    expect((await rpc(a, sid, 'tools/call', { name: 'ups__grow', arguments: {} })).result.content[0].text).toBe('grow ran');
    // Well inside the 10 s B kept the lists for: a change B heard of only when they expire fails here.
    const waited = await until('the new tool listed on B', async () => (await toolNames(b, sid)).includes('ups__extra'), 3000, 50);
    expect(await toolNames(b, sid)).toEqual(['ups__base', 'ups__extra', 'ups__grow']);
    expect(await toolNames(a, sid)).toEqual(['ups__base', 'ups__extra', 'ups__grow']);
    await heard(own, 'notifications/tools/list_changed', 3000);
    await heard(other, 'notifications/tools/list_changed', 3000);
    console.log(`list change seen on the other replica after ${waited} ms`);

    // Nothing else disturbed: another session's call on B runs, and its own lists are its worker's.
    expect((await rpc(b, otherSid, 'tools/call', { name: 'ups__base', arguments: {} })).result.content[0].text).toBe('base ran');
    expect(await toolNames(b, otherSid)).toEqual(['ups__base', 'ups__grow']);
    for (const r of replicas) expect((await fetch(new URL('/readyz', r.base))).status).toBe(200);
  });
});
