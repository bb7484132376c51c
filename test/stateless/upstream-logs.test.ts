/**
 * A 2026-07-28 upstream's log messages (examples/modern's log_three: debug, info, warning on its
 * SSE reply, before its result) reach the client whose call they came with, at the level that
 * client asked for: a 2025 session's logging/setLevel (over Streamable HTTP, over legacy
 * HTTP+SSE, and on another replica than the one it was set on), a 2026 request's `_meta`
 * logLevel. None when the client asked for none; an upstream that sends below the level is
 * filtered by the gateway. Afterwards nothing is in flight and other clients are served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import { exampleConfig, openSession, post, startGateway, type RunningGateway } from '../support/gateway.js';
import { httpUpstream, startStatelessFixture, type HttpServerProcess } from '../support/http-upstream.js';
import { answerOn, LEGACY_INIT, openLegacyStream, postLegacy } from '../support/legacy-sse.js';
import { postStateless } from '../support/stateless.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { messagesOf, parseSse } from '../support/sse.js';
import { until } from '../support/wait.js';

const TOOL = 'modern__log_three';
const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

let fixture: HttpServerProcess;
let gw: RunningGateway;

/** The levels of the log messages a POST's reply carried before its answer, and the answer. */
function reply(
  r: { headers: Headers; text: string; json: any },
  id: number | string,
): { levels: string[]; answer: any } {
  const sse = r.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
  const messages: any[] = sse ? messagesOf(parseSse(r.text)) : [r.json];
  const at = messages.findIndex((m) => m.id === id);
  expect(at, r.text).toBe(messages.length - 1);
  const logs = messages.filter((m) => m.method === 'notifications/message');
  for (const m of logs)
    expect(m.params).toEqual({ level: m.params.level, logger: 'modern-fixture', data: `${m.params.level} message` });
  return { levels: logs.map((m) => m.params.level), answer: messages[at] };
}

const session = (sid: string) => ({ 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });

async function setLevel(g: RunningGateway, sid: string, level: string): Promise<void> {
  const r = await post(
    g.url,
    { jsonrpc: '2.0', id: `level-${level}`, method: 'logging/setLevel', params: { level } },
    session(sid),
  );
  expect(r.json, r.text).toEqual({ jsonrpc: '2.0', id: `level-${level}`, result: {} });
}

async function sessionCall(
  g: RunningGateway,
  sid: string,
  id: number,
  args: Record<string, unknown> = {},
): Promise<string[]> {
  const r = await post(
    g.url,
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name: TOOL, arguments: args } },
    session(sid),
  );
  const { levels, answer } = reply(r, id);
  expect(answer.result?.content?.[0]?.text, r.text).toBe('logged');
  return levels;
}

async function statelessCall(
  id: number,
  level: string | undefined,
  args: Record<string, unknown> = {},
): Promise<string[]> {
  const r = await postStateless(gw, id, 'tools/call', {
    name: TOOL,
    arguments: args,
    ...(level ? { _meta: { [LOG_LEVEL]: level } } : {}),
  });
  const { levels, answer } = reply(r, id);
  expect(answer.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'logged' }] });
  return levels;
}

beforeAll(async () => {
  fixture = await startStatelessFixture();
  gw = await startGateway(exampleConfig({ upstreams: [httpUpstream('modern', fixture.url)] }));
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await fixture?.stop();
});

describe("a 2026-07-28 upstream's log messages", () => {
  it('reach a 2025 session at the level it set with logging/setLevel', async () => {
    const sid = await openSession(gw.url);
    await setLevel(gw, sid, 'debug');
    expect(await sessionCall(gw, sid, 1)).toEqual(['debug', 'info', 'warning']);
    await setLevel(gw, sid, 'warning');
    expect(await sessionCall(gw, sid, 2)).toEqual(['warning']);
  });

  it('reach no 2025 session that set no level (the upstream is asked for none)', async () => {
    const sid = await openSession(gw.url);
    expect(await sessionCall(gw, sid, 1)).toEqual([]);
  });

  it('are offered to both eras: logging is in initialize and server/discover', async () => {
    const init = await post(gw.url, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(init.json.result.capabilities.logging).toEqual({});
    expect((await postStateless(gw, 1, 'server/discover')).json.result.capabilities.logging).toEqual({});
  });

  it('reach a 2026 request at the level its _meta asks for, and none without one', async () => {
    expect(await statelessCall(10, 'debug')).toEqual(['debug', 'info', 'warning']);
    expect(await statelessCall(11, 'info')).toEqual(['info', 'warning']);
    expect(await statelessCall(12, 'warning')).toEqual(['warning']);
    expect(await statelessCall(13, undefined)).toEqual([]);
  });

  it('are filtered by the gateway when the upstream sends below the level asked for', async () => {
    expect(await statelessCall(20, 'warning', { unfiltered: true })).toEqual(['warning']);
    const sid = await openSession(gw.url);
    await setLevel(gw, sid, 'info');
    expect(await sessionCall(gw, sid, 21, { unfiltered: true })).toEqual(['info', 'warning']);
  });

  it('reach a legacy HTTP+SSE session on its stream, at its level', async () => {
    const stream = await openLegacyStream(gw.base);
    try {
      await postLegacy(stream.endpoint, LEGACY_INIT);
      await answerOn(stream.reader, 'init');
      await postLegacy(stream.endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' });
      await postLegacy(stream.endpoint, {
        jsonrpc: '2.0',
        id: 'lvl',
        method: 'logging/setLevel',
        params: { level: 'info' },
      });
      expect(await answerOn(stream.reader, 'lvl')).toMatchObject({ result: {} });
      await postLegacy(stream.endpoint, {
        jsonrpc: '2.0',
        id: 'call',
        method: 'tools/call',
        params: { name: TOOL, arguments: {} },
      });
      const levels: string[] = [];
      for (;;) {
        const ev = await stream.reader.next();
        const m = JSON.parse(ev!.data);
        if (m.method === 'notifications/message') levels.push(m.params.level);
        if (m.id === 'call') {
          expect(m.result.content[0].text).toBe('logged');
          break;
        }
      }
      expect(levels).toEqual(['info', 'warning']);
    } finally {
      stream.close();
    }
  });

  it('leave nothing in flight, and other clients are served', async () => {
    expect(internals(gw.gateway.server).inFlight).toBe(0);
    // (The health probe's server/discover counts there too while it runs: waited out, bounded.)
    const upstreamInFlight = async () =>
      ((await (await fetch(`${gw.base}/readyz`)).json()) as { upstreams: Record<string, { inFlight: number }> })
        .upstreams.modern?.inFlight;
    await until('the modern upstream to have nothing in flight', async () => (await upstreamInFlight()) === 0);
    const other = await postStateless(gw, 99, 'tools/call', {
      name: 'modern__echo',
      arguments: { text: 'still here' },
    });
    expect(other.json.result.content[0].text).toBe('echo: still here');
  });
});

describe('a 2025 session level set on one replica', () => {
  let redis: RedisServer;
  const replicas: RunningGateway[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    replicas.push(
      ...(await startReplicas(2, {
        sessions: { redisUrl: redis.url },
        upstreams: [httpUpstream('modern', fixture.url)],
      })),
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await redis?.stop();
  });

  it('is honoured on another (the session record carries it)', async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const sid = await openSession(a.url);
    await setLevel(a, sid, 'info');
    expect(await sessionCall(b, sid, 1)).toEqual(['info', 'warning']);
    expect(await sessionCall(a, sid, 2)).toEqual(['info', 'warning']);
  });
});
