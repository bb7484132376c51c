/**
 * tools/call arguments are checked against the tool's inputSchema before they reach the upstream:
 * a wrong type or a missing required argument gets -32602 with ajv's errors in `error.data`, and
 * the upstream's own wire shows the call never came. In both eras (2025 sessions, 2026-07-28
 * stateless requests) and both modes (shared pool, per-session workers), to stdio and HTTP
 * upstreams. `validateArguments: false` lets the same call through; a schema ajv cannot compile
 * leaves its tool unchecked with one warning. Real gateway with its log captured, real upstream
 * processes (their stdin tapped, or their HTTP requests recorded), loopback.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Gateway } from '../../src/app.js';
import { ECHO_SERVER, SLOW_SERVER, exampleConfig, openSession, post, stdioUpstream } from '../support/gateway.js';
import { statelessRequest } from '../support/stateless.js';
import { httpUpstream, readRecording, startEchoHttp, type HttpServerProcess } from '../support/http-upstream.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';
import { readTap, tappedStdio } from '../support/stdio-tap.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';
import { capturingLogger } from '../support/log-lines.js';

/** Tools whose schemas ajv cannot use (a dangling $ref; over the size cap) beside two it can. */
const RAW_SERVER = rawStdioServer(
  `if (m.method === 'initialize') return { protocolVersion: m.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'raw', version: '1' } };
  if (m.method === 'tools/list') return { tools };
  if (m.method === 'tools/call') {
    if (m.params.name === 'refresh') send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    return { content: [{ type: 'text', text: 'ran ' + m.params.name }] };
  }
  return {};`,
  `const huge = {};
for (let i = 0; i < 4000; i++) huge['p' + i] = { type: 'string', description: 'property number ' + i };
const tools = [
  { name: 'broken', inputSchema: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } }, required: ['a'] } },
  { name: 'huge', inputSchema: { type: 'object', properties: huge, required: ['p0'] } },
  { name: 'typed', inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
  { name: 'oddid', inputSchema: { $id: 5, type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
  { name: 'draft7https', inputSchema: { $schema: 'https://json-schema.org/draft-07/schema#', type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
  { name: 'refresh', inputSchema: { type: 'object' } },
];`,
);

const lines: Array<Record<string, unknown>> = [];
let gateway: Gateway;
let url: URL;
let base: string;
let dir: string;
let remote: HttpServerProcess;
const taps = { echo: '', loose: '', mine: '', raw: '' };
let record: string;
/** A second client, whose normal calls must keep working after each bad one. */
let bystander: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-args-'));
  for (const name of Object.keys(taps) as Array<keyof typeof taps>) taps[name] = join(dir, `${name}.tap`);
  record = join(dir, 'remote.jsonl');
  const rawScript = join(dir, 'raw-server.mjs');
  writeFileSync(rawScript, RAW_SERVER);
  remote = await startEchoHttp(0, ['--record', record]);
  const config = exampleConfig({
    upstreams: [
      stdioUpstream('echo', ECHO_SERVER, tappedStdio(ECHO_SERVER, taps.echo)),
      stdioUpstream('loose', SLOW_SERVER, { ...tappedStdio(SLOW_SERVER, taps.loose), validateArguments: false }),
      stdioUpstream('mine', SLOW_SERVER, {
        ...tappedStdio(SLOW_SERVER, taps.mine),
        mode: 'per-session',
        pool: { spares: 0 },
      }),
      stdioUpstream('raw', rawScript, tappedStdio(rawScript, taps.raw)),
      httpUpstream('remote', remote.url),
    ],
  });
  const log = capturingLogger('info', lines);
  gateway = await buildApp(config, { logger: log, defaultMetrics: false });
  base = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  url = new URL(config.path, base);
  bystander = await openSession(url);
});

afterAll(async () => {
  await gateway?.close();
  await remote?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function call(sid: string, id: number, name: string, args?: unknown) {
  const params: Record<string, unknown> = { name };
  if (args !== undefined) params.arguments = args;
  return post(
    url,
    { jsonrpc: '2.0', id, method: 'tools/call', params },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
}

/** A 2026-07-28 tools/call: the request's own _meta, mirrored headers, no session. */
function statelessCall(id: number, name: string, args: unknown, extra: Record<string, unknown> = {}) {
  const { body, headers } = statelessRequest(id, 'tools/call', { name, arguments: args, ...extra });
  return post(url, body, headers);
}

/** The arguments of every tools/call of `tool` that reached a tapped stdio upstream. */
function stdioArrivals(tap: string, tool: string): unknown[] {
  return readTap(tap)
    .filter((t) => t.dir === 'IN' && t.message.method === 'tools/call' && t.message.params?.name === tool)
    .map((t) => t.message.params.arguments);
}

/** The arguments of every tools/call of `tool` that reached the HTTP upstream. */
function httpArrivals(tool: string): unknown[] {
  return readRecording(record)
    .filter((m) => m.method === 'tools/call' && m.params?.name === tool)
    .map((m) => m.params.arguments);
}

function textOf(reply: { json: any }): string {
  return (reply.json?.result?.content ?? []).map((c: { text?: string }) => c.text ?? '').join('');
}

/** Another client's normal call still works at once, and nothing is left in flight anywhere. */
async function othersStillServed(): Promise<void> {
  const r = await call(bystander, 900, 'echo__add', { a: 20, b: 22 });
  expect(textOf(r)).toBe('42');
  expect(internals(gateway.server).inFlight).toBe(0);
  const readyz = (await (await fetch(new URL('/readyz', base))).json()) as {
    upstreams: Record<string, { inFlight: number }>;
  };
  for (const [name, status] of Object.entries(readyz.upstreams))
    expect({ name, inFlight: status.inFlight }).toEqual({ name, inFlight: 0 });
}

function expectInvalidArguments(reply: { status: number; json: any }, first: Record<string, unknown>): void {
  expect(reply.status).toBe(200);
  expect(reply.json.error).toMatchObject({ code: -32602, data: { type: 'INVALID_PARAMS' } });
  expect(reply.json.error.message).toMatch(/^Invalid arguments: /);
  const errors = reply.json.error.data.errors as Array<Record<string, unknown>>;
  expect(errors.length).toBeGreaterThanOrEqual(1);
  expect(errors.length).toBeLessThanOrEqual(5);
  expect(errors[0]).toMatchObject(first);
  expect(Object.keys(errors[0]!).sort()).toEqual(['instancePath', 'keyword', 'message', 'params']);
}

const WRONG_TYPE = { instancePath: '/a', keyword: 'type', params: { type: 'number' }, message: 'must be number' };
const MS_WRONG_TYPE = { instancePath: '/ms', keyword: 'type', params: { type: 'number' } };
const MISSING_B = { instancePath: '', keyword: 'required', params: { missingProperty: 'b' } };

describe('tools/call arguments against the inputSchema', () => {
  it('stdio upstream: a wrong type and a missing argument get -32602 with ajv errors and never reach it; a valid call does', async () => {
    const sid = await openSession(url);
    expectInvalidArguments(await call(sid, 1, 'echo__add', { a: 'seven', b: 2 }), WRONG_TYPE);
    expectInvalidArguments(await call(sid, 2, 'echo__add', { a: 1 }), MISSING_B);
    // Absent arguments are checked as {}.
    expectInvalidArguments(await call(sid, 3, 'echo__echo'), {
      keyword: 'required',
      params: { missingProperty: 'text' },
    });
    // Not an object at all: the envelope check at the door refuses it before any schema is consulted.
    const notObject = await call(sid, 4, 'echo__whoami', 'me');
    expect(notObject.json.error).toMatchObject({ code: -32602, data: { type: 'INVALID_PARAMS' } });
    expect(notObject.json.error.message).toBe('Invalid params: params.arguments must be object');

    const ok = await call(sid, 5, 'echo__add', { a: 2, b: 3 });
    expect(textOf(ok)).toBe('5');
    expect(textOf(await call(sid, 6, 'echo__whoami', {}))).toContain('pid');
    expect(stdioArrivals(taps.echo, 'add')).toContainEqual({ a: 2, b: 3 });
    expect(stdioArrivals(taps.echo, 'add')).not.toContainEqual({ a: 'seven', b: 2 });
    expect(stdioArrivals(taps.echo, 'add')).not.toContainEqual({ a: 1 });
    expect(stdioArrivals(taps.echo, 'echo')).toEqual([]);
    expect(stdioArrivals(taps.echo, 'whoami')).toEqual([{}]);
    await othersStillServed();
  });

  it('HTTP upstream: the same bad calls get -32602 and its recorded requests show none of them', async () => {
    const sid = await openSession(url);
    expectInvalidArguments(await call(sid, 1, 'remote__add', { a: 'seven', b: 2 }), WRONG_TYPE);
    expectInvalidArguments(await call(sid, 2, 'remote__add', { a: 1 }), MISSING_B);
    // zod's .min(0) as JSON Schema: a bound, not only a type.
    expectInvalidArguments(await call(sid, 3, 'remote__sleep', { ms: -5 }), {
      instancePath: '/ms',
      keyword: 'minimum',
    });

    expect(textOf(await call(sid, 4, 'remote__add', { a: 4, b: 5 }))).toBe('9');
    expect(httpArrivals('add')).toEqual([{ a: 4, b: 5 }]);
    expect(httpArrivals('sleep')).toEqual([]);
    await othersStillServed();
  });

  it('per-session workers: a bad call is refused before any worker hears of it', async () => {
    const sid = await openSession(url);
    expectInvalidArguments(await call(sid, 1, 'mine__sleep', { ms: 'soon' }), MS_WRONG_TYPE);
    expectInvalidArguments(await call(sid, 2, 'mine__sleep', { ms: 1, steps: 0.5 }), {
      instancePath: '/steps',
      keyword: 'type',
      params: { type: 'integer' },
    });
    expect(stdioArrivals(taps.mine, 'sleep')).toEqual([]);
    expect(textOf(await call(sid, 3, 'mine__sleep', { ms: 1, steps: 0 }))).toBe('slept 1ms');
    expect(stdioArrivals(taps.mine, 'sleep')).toEqual([{ ms: 1, steps: 0 }]);
    await othersStillServed();
  });

  it('2026-07-28 stateless requests: bad arguments get -32602; _meta, requestState and inputResponses are not arguments', async () => {
    expectInvalidArguments(
      await statelessCall(1, 'echo__add', { a: 'nine', b: 2 }, { _meta: { progressToken: 'p' } }),
      WRONG_TYPE,
    );
    expectInvalidArguments(await statelessCall(2, 'mine__sleep', { ms: 'soon' }), MS_WRONG_TYPE);
    expectInvalidArguments(await statelessCall(3, 'remote__add', { a: 1 }), MISSING_B);
    // A retry's round-trip fields sit beside the arguments: the arguments are still what is checked.
    expectInvalidArguments(
      await statelessCall(4, 'mine__sleep', { ms: 'x' }, { requestState: 'r', inputResponses: {} }),
      MS_WRONG_TYPE,
    );
    expect(stdioArrivals(taps.mine, 'sleep')).not.toContainEqual({ ms: 'soon' });
    expect(stdioArrivals(taps.echo, 'add')).not.toContainEqual({ a: 'nine', b: 2 });
    expect(httpArrivals('add')).not.toContainEqual({ a: 1 });

    const ok = await statelessCall(5, 'echo__add', { a: 10, b: 11 }, { _meta: { progressToken: 'p' } });
    expect(ok.json.result).toMatchObject({ resultType: 'complete' });
    expect(textOf(ok)).toBe('21');
    expect(textOf(await statelessCall(6, 'mine__sleep', { ms: 2, steps: 0 }))).toBe('slept 2ms');
    await othersStillServed();
  });

  it('validateArguments: false lets the same bad call through to the upstream, which answers for itself', async () => {
    const sid = await openSession(url);
    const r = await call(sid, 1, 'loose__sleep', { ms: 'soon' });
    expect(r.json.error?.data?.type).not.toBe('INVALID_PARAMS');
    expect(stdioArrivals(taps.loose, 'sleep')).toEqual([{ ms: 'soon' }]);
    await othersStillServed();
  });

  it('a schema ajv cannot compile (or too large to) leaves that tool unchecked, with one warning, across refreshes', async () => {
    const sid = await openSession(url);
    const warnings = (tool: string) =>
      lines.filter((l) => l.level === 40 && l.tool === tool && String(l.msg).includes('cannot be compiled'));

    // Both would be refused if checked: `a` and `p0` are required, and p0 must be a string.
    expect(textOf(await call(sid, 1, 'raw__broken', {}))).toBe('ran broken');
    expect(textOf(await call(sid, 2, 'raw__broken', {}))).toBe('ran broken');
    expect(textOf(await call(sid, 3, 'raw__huge', { p0: 5 }))).toBe('ran huge');
    // A non-string $id: ajv throws while compiling (and while forgetting the schema).
    expect(textOf(await call(sid, 31, 'raw__oddid', {}))).toBe('ran oddid');
    expect(stdioArrivals(taps.raw, 'broken')).toEqual([{}, {}]);
    expect(stdioArrivals(taps.raw, 'huge')).toEqual([{ p0: 5 }]);
    // The same upstream's other tools are still checked.
    expectInvalidArguments(await call(sid, 4, 'raw__typed', { n: 1.5 }), {
      instancePath: '/n',
      keyword: 'type',
      params: { type: 'integer' },
    });
    // draft-07 spelled with https is still draft-07.
    expectInvalidArguments(await call(sid, 41, 'raw__draft7https', { n: 'one' }), {
      instancePath: '/n',
      keyword: 'type',
      params: { type: 'integer' },
    });
    expect(stdioArrivals(taps.raw, 'typed')).toEqual([]);
    expect(stdioArrivals(taps.raw, 'draft7https')).toEqual([]);

    // The upstream says its list changed; the catalog is rebuilt from an unchanged list.
    const before = lines.length;
    expect(textOf(await call(sid, 5, 'raw__refresh', {}))).toBe('ran refresh');
    await until('the catalog refresh', () =>
      lines.slice(before).some((l) => l.upstream === 'raw' && l.msg === 'catalog refreshed'),
    );
    expect(textOf(await call(sid, 6, 'raw__broken', {}))).toBe('ran broken');
    expect(textOf(await call(sid, 7, 'raw__huge', {}))).toBe('ran huge');
    expect(textOf(await call(sid, 71, 'raw__oddid', {}))).toBe('ran oddid');
    expectInvalidArguments(await call(sid, 8, 'raw__typed', {}), {
      keyword: 'required',
      params: { missingProperty: 'n' },
    });

    expect(warnings('raw__broken')).toHaveLength(1);
    expect(warnings('raw__broken')[0]).toMatchObject({
      upstream: 'raw',
      err: expect.stringContaining('#/$defs/missing'),
    });
    expect(warnings('raw__huge')).toHaveLength(1);
    expect(warnings('raw__oddid')).toHaveLength(1);
    expect(warnings('raw__draft7https')).toHaveLength(0);
    expect(warnings('raw__typed')).toHaveLength(0);
    await othersStillServed();
  });
});
