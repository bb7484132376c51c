/**
 * Hostile bodies at the door: nesting that overflows recursive consumers, params and _meta of
 * the wrong type, method names that are Object.prototype's own, oversized batches, and invented
 * method names aimed at the metrics. Each is refused with a typed error from the table; after
 * each, nothing is held (no call in flight or queued on any worker, no tracked request) and
 * another session's call succeeds at once. Real gateway, real stdio and HTTP upstreams, loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { httpUpstream, startEchoHttp, type HttpServerProcess } from '../support/http-upstream.js';
import { MODERN_META, statelessRequest, postStateless } from '../support/stateless.js';

let gw: RunningGateway;
let echoHttp: HttpServerProcess;
let target: string;
let witness: string;
let n = 0;

const headersOf = (sid: string, version = '2025-06-18') => ({ 'mcp-session-id': sid, 'mcp-protocol-version': version });

/** JSON text of `depth` nested arrays: built as text, since JSON.stringify itself cannot. */
function nestedText(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** A tools/call body whose arguments carry `deep` (raw JSON text) beside a text argument. */
function deepCall(name: string, deep: string, extra = ''): string {
  return `{"jsonrpc":"2.0","id":"d${++n}","method":"tools/call","params":{"name":"${name}","arguments":{"text":"x","deep":${deep}}${extra}}}`;
}

function call(name: string, args: unknown, extra: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id: `c${++n}`, method: 'tools/call', params: { name, arguments: args, ...extra } };
}

/** Another session's call to each upstream answers, and nothing is left held. */
async function expectUndisturbed(): Promise<void> {
  for (const tool of ['echo__echo', 'web__echo']) {
    const r = await post(gw.url, call(tool, { text: 'still here' }), headersOf(witness));
    expect(r.status, r.text).toBe(200);
    expect(r.json.result.content[0].text).toBe('still here');
  }
  await untilNothingHeld(gw);
}

beforeAll(async () => {
  echoHttp = await startEchoHttp();
  gw = await startGateway(
    exampleConfig({
      // Few slots: anything a bad request leaked would starve the witness at once.
      upstreams: [
        stdioUpstream('echo', ECHO_SERVER, { pool: { min: 1, max: 1, maxInFlight: 4, queueSize: 4 } }),
        httpUpstream('web', echoHttp.url, { pool: { min: 1, max: 1, maxInFlight: 4, queueSize: 4 } }),
      ],
    }),
  );
  target = await openSession(gw.url);
  witness = await openSession(gw.url);
});

afterAll(async () => {
  await gw?.stop();
  await echoHttp?.stop();
});

describe('nesting past limits.maxJsonDepth', () => {
  it('a 10,000-level array in tools/call arguments is refused with 400 -32600, for a stdio and an HTTP upstream', async () => {
    for (const tool of ['echo__echo', 'web__echo']) {
      const r = await post(gw.url, deepCall(tool, nestedText(10_000)), headersOf(target));
      expect(r.status, r.text).toBe(400);
      expect(r.json).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, data: { type: 'INVALID_REQUEST' } },
      });
      expect(r.json.error.message).toMatch(/maxJsonDepth/);
    }
    await expectUndisturbed();
  });

  it('64 such requests at once (the load that wedged both workers) leave every slot free', async () => {
    const body = deepCall('echo__echo', nestedText(10_000));
    const replies = await Promise.all(Array.from({ length: 64 }, () => post(gw.url, body, headersOf(target))));
    expect(replies.map((r) => r.status)).toEqual(Array(64).fill(400));
    await expectUndisturbed();
  });

  it('stateless (2026-07-28) and anonymous: refused the same way', async () => {
    const { headers } = statelessRequest(1, 'tools/call', { name: 'echo__echo' });
    const meta = JSON.stringify(MODERN_META);
    const r = await post(gw.url, deepCall('echo__echo', nestedText(10_000), `,"_meta":${meta}`), headers);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toMatchObject({ code: -32600, data: { type: 'INVALID_REQUEST' } });
    await expectUndisturbed();
  });

  it('brackets inside strings do not count, and nesting within the limit reaches the upstream', async () => {
    const r = await post(
      gw.url,
      call('echo__echo', { text: '['.repeat(5000), deep: JSON.parse(nestedText(40)) }),
      headersOf(target),
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.result.content[0].text).toBe('['.repeat(5000));
  });
});

describe('params and _meta of the wrong shape', () => {
  const bad: Array<[string, Record<string, unknown>]> = [
    ['_meta a string', { name: 'echo__echo', arguments: { text: 'x' }, _meta: 'x' }],
    ['_meta an array', { name: 'echo__echo', arguments: { text: 'x' }, _meta: [1] }],
    ['progressToken an object', { name: 'echo__echo', arguments: { text: 'x' }, _meta: { progressToken: {} } }],
    ['name a number', { name: 7, arguments: {} }],
    ['arguments a string', { name: 'echo__echo', arguments: 'text=x' }],
    ['arguments an array', { name: 'echo__echo', arguments: ['x'] }],
  ];
  for (const [label, params] of bad) {
    it(`tools/call with ${label}: -32602 in-band, the upstream never asked`, async () => {
      const id = `p${++n}`;
      const r = await post(gw.url, { jsonrpc: '2.0', id, method: 'tools/call', params }, headersOf(target));
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32602, data: { type: 'INVALID_PARAMS' } } });
      expect(r.json.error.message).toMatch(/^Invalid params: params\./);
    });
  }

  it('1,100 requests with "_meta":"x" in a burst hold no slot: the witness is served at once after', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'm',
      method: 'tools/call',
      params: { name: 'web__echo', arguments: { text: 'x' }, _meta: 'x' },
    });
    for (let round = 0; round < 11; round++) {
      const replies = await Promise.all(Array.from({ length: 100 }, () => post(gw.url, body, headersOf(target))));
      for (const r of replies) expect(r.json.error.data.type).toBe('INVALID_PARAMS');
    }
    await expectUndisturbed();
  });

  it('other methods: resources/read without uri, logging/setLevel with a number, a cursor object, completion without argument', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['resources/read', {}, /params\.uri is required/],
      ['logging/setLevel', { level: 3 }, /params\.level must be string/],
      ['tools/list', { cursor: { page: 2 } }, /params\.cursor must be string/],
      ['completion/complete', { ref: { type: 'ref/prompt', name: 'echo__greet' } }, /params\.argument is required/],
    ];
    for (const [method, params, message] of cases) {
      const r = await post(gw.url, { jsonrpc: '2.0', id: method, method, params }, headersOf(target));
      expect(r.json.error, method).toMatchObject({ code: -32602, data: { type: 'INVALID_PARAMS' } });
      expect(r.json.error.message, method).toMatch(message);
    }
  });

  it('initialize without a string protocolVersion: -32602, no session made', async () => {
    const r = await post(gw.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: 20250618, capabilities: {} },
    });
    expect(r.json.error).toMatchObject({ code: -32602, data: { type: 'INVALID_PARAMS' } });
    expect(r.headers.get('mcp-session-id')).toBeNull();
  });

  it('a notification with bad params alone is refused (400); a stateless request with bad params gets -32602', async () => {
    const alone = await post(
      gw.url,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: { x: 1 } } },
      headersOf(target),
    );
    expect(alone.status).toBe(400);
    expect(alone.json.error).toMatchObject({ code: -32600, data: { type: 'INVALID_REQUEST' } });
    const modern = await postStateless(gw, 9, 'tools/call', { name: 'echo__echo', arguments: 'text' });
    expect(modern.status, modern.text).toBe(200);
    expect(modern.json).toMatchObject({ id: 9, error: { code: -32602, data: { type: 'INVALID_PARAMS' } } });
    await expectUndisturbed();
  });
});

describe("method names that are Object.prototype's", () => {
  for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    it(`${method}: -32601 for a session, 404 -32601 stateless`, async () => {
      const r = await post(gw.url, { jsonrpc: '2.0', id: method, method, params: {} }, headersOf(target));
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ id: method, error: { code: -32601, data: { type: 'METHOD_NOT_FOUND' } } });
      const modern = await postStateless(gw, method, method);
      expect(modern.status, modern.text).toBe(404);
      expect(modern.json.error).toMatchObject({ code: -32601 });
    });
  }
});

describe('batches past limits.maxBatchSize', () => {
  it('a 2025-03-26 batch of 101 is refused whole (400 -32600); one of 100 is served', async () => {
    const sid = await openSession(gw.url, '2025-03-26');
    const batch = (size: number) => Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));
    const tooMany = await post(gw.url, batch(101), headersOf(sid, '2025-03-26'));
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error).toMatchObject({ code: -32600, data: { type: 'INVALID_REQUEST' } });
    expect(tooMany.json.error.message).toMatch(/maxBatchSize/);
    const ok = await post(gw.url, batch(100), headersOf(sid, '2025-03-26'));
    expect(ok.status).toBe(200);
    expect(ok.json).toHaveLength(100);
  });
});

describe('metric labels a client cannot grow', () => {
  it('2,000 invented method names add one series, _other, and none of the names', async () => {
    const names = Array.from({ length: 2000 }, (_, i) => `invented/${i}/${'x'.repeat(200)}`);
    for (let i = 0; i < names.length; i += 200) {
      await Promise.all(
        names
          .slice(i, i + 200)
          .map((method) => post(gw.url, { jsonrpc: '2.0', id: method, method }, headersOf(target))),
      );
    }
    const text = await (await fetch(new URL('/metrics', gw.base))).text();
    expect(text).toContain('mcp_method_name="_other"');
    expect(text).not.toContain('invented/');
    const series = text.split('\n').filter((l) => l.startsWith('mcp_server_operation_duration_seconds_count'));
    expect(series.length).toBeLessThan(40);
    await expectUndisturbed();
  });
});
