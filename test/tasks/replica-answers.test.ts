/**
 * A 2025-11-25 task whose call asks its client (elicitation), answered on another replica: two
 * replicas on one real redis-server, the session, its GET stream and the task's call on A, the
 * client's answer POSTed to B. The task shows `working` on every replica as soon as the answer
 * is taken (it showed `input_required` until the call ended before), then completes with the
 * answer. Upstream: a raw stdio server whose `ask_then_work` asks, then works `seconds` more.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import { askingUpstream } from '../support/asking-server.js';
import { post, type RunningGateway } from '../support/gateway.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { SseReader } from '../support/sse.js';
import { until } from '../support/wait.js';

const UPSTREAM = askingUpstream('ask', { tasks: { tools: ['ask_then_work'] } });
const VERSION = '2025-11-25';

let redis: RedisServer;
let replicas: RunningGateway[] = [];
const streams: SseReader[] = [];
let nextId = 1;

const inSession = (sid: string) => ({ 'mcp-session-id': sid, 'mcp-protocol-version': VERSION });

async function openSession(gw: RunningGateway): Promise<string> {
  const params = {
    protocolVersion: VERSION,
    capabilities: { elicitation: {} },
    clientInfo: { name: 'answers', version: '1' },
  };
  const init = await post(gw.url, { jsonrpc: '2.0', id: 0, method: 'initialize', params });
  const sid = init.headers.get('mcp-session-id');
  if (!sid) throw new Error(`initialize failed: ${init.status} ${init.text}`);
  await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, inSession(sid));
  return sid;
}

async function rpc(
  gw: RunningGateway,
  sid: string,
  method: string,
  params: Record<string, unknown> = {},
): Promise<any> {
  const res = await post(gw.url, { jsonrpc: '2.0', id: nextId++, method, params }, inSession(sid));
  if (!res.json) throw new Error(`${method}: ${res.status} ${res.text}`);
  return res.json;
}

const statusOn = async (gw: RunningGateway, sid: string, taskId: string): Promise<string> =>
  (await rpc(gw, sid, 'tasks/get', { taskId })).result.status;

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(2, { sessions: { redisUrl: redis.url }, upstreams: [UPSTREAM] });
}, 60_000);

afterAll(async () => {
  await Promise.all(streams.map((s) => s.cancel()));
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe('a 2025 task answered on another replica', () => {
  it('shows working on every replica once the answer is taken, then completes with it', async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const sid = await openSession(a);
    const res = await fetch(a.url, { headers: { accept: 'text/event-stream', ...inSession(sid) } });
    expect(res.status).toBe(200);
    const stream = new SseReader(res);
    streams.push(stream);

    const created = await rpc(a, sid, 'tools/call', {
      name: 'ask__ask_then_work',
      arguments: { seconds: 8 },
      task: { ttl: 60_000 },
    });
    const taskId: string = created.result.task.taskId;
    let asked: any;
    while (!asked) {
      const ev = await stream.next(5000);
      const m = ev && ev.data !== '' ? JSON.parse(ev.data) : undefined;
      if (m?.method === 'elicitation/create') asked = m;
    }
    expect(asked.params._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    await until('input_required on B', async () => (await statusOn(b, sid, taskId)) === 'input_required', 5000, 50);

    const answered = await post(
      b.url,
      { jsonrpc: '2.0', id: asked.id, result: { action: 'accept', content: { name: 'Ada' } } },
      inSession(sid),
    );
    expect(answered.status).toBe(202);
    // The call works 8 s after the answer: a status that changes only when the call ends fails here.
    const waited = await until('working on B', async () => (await statusOn(b, sid, taskId)) === 'working', 3000, 50);
    expect(await statusOn(a, sid, taskId)).toBe('working');
    console.log(`task working on the other replica ${waited} ms after the answer`);

    await until('completed', async () => (await statusOn(b, sid, taskId)) === 'completed', 15_000, 200);
    const result = await rpc(b, sid, 'tasks/result', { taskId });
    expect(result.result.content[0].text).toBe('worked for {"name":"Ada"}');

    // Another session on B is served; nothing is held for the task on either replica.
    const other = await openSession(b);
    expect((await rpc(b, other, 'tools/call', { name: 'ask__hello', arguments: {} })).result.content[0].text).toBe(
      'hello',
    );
    for (const r of replicas) expect(internals(r.gateway.server).tasks).toMatchObject({ places: 0, waits: 0 });
  }, 40_000);
});
