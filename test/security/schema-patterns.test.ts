/**
 * An upstream's schemas and templates are not trusted input: a pattern V8 backtracks on
 * (`^(a+)+$`), a template of many wildcards, a `uniqueItems` ajv checks pair by pair, each met by
 * a small client argument, blocked the gateway's event loop (106 s for 43 bytes). Here they are
 * matched by RE2 within bounds: the hostile call gets INVALID_PARAMS (or RESOURCE_NOT_FOUND) and
 * `/healthz` answers while it runs. A tool whose pattern RE2 cannot take (lookahead,
 * backreference) is refused alone, with one warning; its sibling tools are checked as before.
 * A virtual server's `*` globs (the operator's) meet URIs a client writes in linear time too.
 * A real gateway in its own process (so this process can see its event loop stall), a real stdio
 * upstream with its stdin tapped, loopback.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { openSession, post, stdioUpstream } from '../support/gateway.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';
import { readTap, tappedStdio } from '../support/stdio-tap.js';
import { within } from '../support/wait.js';

const string = (pattern: string) => ({ type: 'string', pattern });
const SERVER = rawStdioServer(
  `if (m.method === 'initialize') return { protocolVersion: m.params.protocolVersion, capabilities: { tools: {}, resources: {} }, serverInfo: { name: 'patterns', version: '1' } };
  if (m.method === 'tools/list') return { tools };
  if (m.method === 'resources/templates/list') return { resourceTemplates: [{ name: 'wild', uriTemplate: 'x{a}{b}{c}{d}{e}{f}{g}{h}{i}{j}{k}{l}y' }] };
  if (m.method === 'resources/list') return { resources: [] };
  if (m.method === 'resources/read') return { contents: [{ uri: m.params.uri, text: 'read ' + m.params.uri }] };
  if (m.method === 'tools/call') return { content: [{ type: 'text', text: 'ran ' + m.params.name }] };
  return {};`,
  `const tools = ${JSON.stringify([
    { name: 'redos', inputSchema: { type: 'object', properties: { s: string('^(a+)+$') }, required: ['s'] } },
    { name: 'keys', inputSchema: { type: 'object', propertyNames: string('^(a+)+$') } },
    { name: 'lookahead', inputSchema: { type: 'object', properties: { password: string('^(?=.*[A-Z]).{8,}$') } } },
    { name: 'backref', inputSchema: { type: 'object', patternProperties: { '^(\\w)\\1$': { type: 'integer' } } } },
    // Three patterns of ~2,000 units each: RE2 would take seconds to compile them all.
    {
      name: 'many',
      inputSchema: {
        type: 'object',
        properties: { a: string('^.{1,120}$'), b: string('^.{2,120}$'), c: string('^.{3,120}$') },
      },
    },
    {
      name: 'sibling',
      inputSchema: {
        type: 'object',
        properties: { id: string('^[a-z]+-[0-9]{3}$') },
        patternProperties: { '^x-[a-z]+$': { type: 'integer' } },
      },
    },
    { name: 'tags', inputSchema: { type: 'object', properties: { tags: { type: 'array', uniqueItems: true } } } },
  ])};`,
);

let dir: string;
let tap: string;
let gw: GatewayProcess;
let base: URL;
const lines: Array<Record<string, unknown>> = [];
/** Another client, whose calls must keep working after each hostile one. */
let bystander: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-patterns-'));
  tap = join(dir, 'upstream.tap');
  const script = join(dir, 'server.mjs');
  writeFileSync(script, SERVER);
  gw = await spawnGateway({
    upstreams: [stdioUpstream('p', script, tappedStdio(script, tap))],
    // A virtual server selects by globs the operator wrote, over names and URIs others write.
    servers: [{ path: '/mcp/v', tools: ['p__*'], resources: ['x*a*b'] }],
  });
  let out = '';
  gw.child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    for (let nl = out.indexOf('\n'); nl !== -1; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  base = new URL('/', gw.url);
  bystander = await openSession(gw.url);
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function call(sid: string, id: number, name: string, args: unknown) {
  return post(
    gw.url,
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
}

/** The hostile request, and /healthz asked while it runs: both must answer within the bound. */
async function whileHealthy<T>(what: string, hostile: Promise<T>): Promise<T> {
  const health = fetch(new URL('/healthz', base));
  const [reply, healthz] = await within(`${what} and /healthz`, Promise.all([hostile, health]));
  expect(healthz.status).toBe(200);
  return reply;
}

function arrivals(tool: string): unknown[] {
  return readTap(tap)
    .filter((t) => t.dir === 'IN' && t.message.method === 'tools/call' && t.message.params?.name === tool)
    .map((t) => t.message.params.arguments);
}

/** Another client's call is still checked and served, and nothing is left in flight or queued. */
async function othersStillServed(): Promise<void> {
  expect((await call(bystander, 900, 'p__sibling', { id: 'abc-123', 'x-n': 1 })).json.result.content[0].text).toBe(
    'ran sibling',
  );
  const readyz = (await (await fetch(new URL('/readyz', base))).json()) as {
    upstreams: Record<string, { inFlight: number; queued: number }>;
  };
  expect(readyz.upstreams.p).toMatchObject({ inFlight: 0, queued: 0 });
}

describe('upstream schema patterns, templates and uniqueItems against hostile arguments', () => {
  it('^(a+)+$ and a 43-byte argument: INVALID_PARAMS while /healthz answers; the upstream never sees it', async () => {
    const sid = await openSession(gw.url);
    const hostile = 'a'.repeat(42) + '!';
    const reply = await whileHealthy('the 43-byte argument', call(sid, 1, 'p__redos', { s: hostile }));
    expect(reply.json.error).toMatchObject({
      code: -32602,
      data: { type: 'INVALID_PARAMS', errors: [{ instancePath: '/s', keyword: 'pattern' }] },
    });
    // The same as a property name (propertyNames), where patterns meet the keys of a client's object.
    const byKey = await whileHealthy('the 43-byte key', call(sid, 2, 'p__keys', { [hostile]: 1 }));
    expect(byKey.json.error).toMatchObject({ code: -32602, data: { type: 'INVALID_PARAMS' } });
    expect(byKey.json.error.data.errors[0]).toMatchObject({ keyword: 'pattern', params: { pattern: '^(a+)+$' } });
    expect(arrivals('redos')).toEqual([]);
    expect(arrivals('keys')).toEqual([]);
    expect((await call(sid, 3, 'p__redos', { s: 'aaaa' })).json.result.content[0].text).toBe('ran redos');
    await othersStillServed();
  });

  it('a string too long to match within the budget gets INVALID_PARAMS naming the pattern', async () => {
    const sid = await openSession(gw.url);
    const reply = await whileHealthy('a 1 MiB argument', call(sid, 1, 'p__redos', { s: 'a'.repeat(1 << 20) }));
    expect(reply.json.error).toMatchObject({
      code: -32602,
      data: { type: 'INVALID_PARAMS', pattern: '^(a+)+$', length: 1 << 20 },
    });
    expect(arrivals('redos')).not.toContainEqual({ s: 'a'.repeat(1 << 20) });
    await othersStillServed();
  });

  it('a lookahead or a backreference RE2 cannot compile refuses that tool alone, logged once; its siblings are checked', async () => {
    const sid = await openSession(gw.url);
    const listed = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(listed.json.result.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'p__backref',
      'p__keys',
      'p__lookahead',
      'p__many',
      'p__redos',
      'p__sibling',
      'p__tags',
    ]);
    for (const id of [2, 3]) {
      const r = await call(sid, id, 'p__lookahead', { password: 'Secret123' });
      expect(r.json.error).toMatchObject({
        code: -32602,
        data: { type: 'INVALID_PARAMS', pattern: '^(?=.*[A-Z]).{8,}$' },
      });
      expect(r.json.error.message).toContain('cannot be compiled by RE2');
    }
    const backref = await call(sid, 4, 'p__backref', { aa: 1 });
    expect(backref.json.error).toMatchObject({ code: -32602, data: { type: 'INVALID_PARAMS', pattern: '^(\\w)\\1$' } });
    const many = await call(sid, 41, 'p__many', { a: 'x' });
    expect(many.json.error).toMatchObject({ code: -32602, data: { type: 'INVALID_PARAMS' } });
    expect(['^.{2,120}$', '^.{3,120}$']).toContain(many.json.error.data.pattern);
    expect(many.json.error.message).toContain('4000 units together');
    expect(arrivals('lookahead')).toEqual([]);
    expect(arrivals('backref')).toEqual([]);
    expect(arrivals('many')).toEqual([]);

    expect((await call(sid, 5, 'p__sibling', { id: 'abc-123', 'x-n': 2 })).json.result.content[0].text).toBe(
      'ran sibling',
    );
    expect((await call(sid, 6, 'p__sibling', { id: 'ABC' })).json.error).toMatchObject({
      data: { type: 'INVALID_PARAMS', errors: [{ instancePath: '/id', keyword: 'pattern' }] },
    });
    expect((await call(sid, 7, 'p__sibling', { 'x-n': 'two' })).json.error).toMatchObject({
      data: { type: 'INVALID_PARAMS', errors: [{ instancePath: '/x-n', keyword: 'type' }] },
    });
    const refusals = (tool: string) =>
      lines.filter((l) => l.tool === tool && String(l.msg).includes('calls to this tool are refused'));
    expect(refusals('p__lookahead')).toHaveLength(1);
    expect(refusals('p__backref')).toHaveLength(1);
    expect(refusals('p__many')).toHaveLength(1);
    expect(refusals('p__sibling')).toHaveLength(0);
    await othersStillServed();
  });

  it('a template of twelve wildcards and a 41-character URI: RESOURCE_NOT_FOUND while /healthz answers; a matching URI is read', async () => {
    const sid = await openSession(gw.url);
    const read = (id: number, uri: string) =>
      post(
        gw.url,
        { jsonrpc: '2.0', id, method: 'resources/read', params: { uri } },
        { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      );
    const reply = await whileHealthy('the 41-character URI', read(1, 'x' + 'a'.repeat(40)));
    expect(reply.json.error).toMatchObject({ code: -32002, data: { type: 'RESOURCE_NOT_FOUND' } });
    expect((await read(2, 'xabcy')).json.result.contents[0].text).toBe('read xabcy');
    await othersStillServed();
  });

  it("a virtual server's glob x*a*b and a 300,000-character URI: RESOURCE_NOT_FOUND while /healthz answers", async () => {
    const v = new URL('/mcp/v', base);
    const sid = await openSession(v);
    const read = (id: number, uri: string) =>
      post(
        v,
        { jsonrpc: '2.0', id, method: 'resources/read', params: { uri } },
        { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      );
    const reply = await whileHealthy('the 300,000-character URI', read(1, 'x' + 'a'.repeat(300_000)));
    expect(reply.json.error).toMatchObject({ code: -32002, data: { type: 'RESOURCE_NOT_FOUND' } });
    const sibling = await post(
      v,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'p__sibling', arguments: { id: 'abc-123' } } },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(sibling.json.result.content[0].text).toBe('ran sibling');
    await othersStillServed();
  });

  it('uniqueItems over 40,000 objects is checked in one pass; a duplicate is named by its indices', async () => {
    const sid = await openSession(gw.url);
    const tags = Array.from({ length: 40_000 }, (_, k) => ({ k }));
    const reply = await whileHealthy('40,000 unique objects', call(sid, 1, 'p__tags', { tags }));
    expect(reply.json.result.content[0].text).toBe('ran tags');
    const twice = [...tags.slice(0, 20_000), { b: 2, a: 1 }, ...tags.slice(20_000), { a: 1, b: 2 }];
    const dup = await whileHealthy('a duplicate among 40,000', call(sid, 2, 'p__tags', { tags: twice }));
    expect(dup.json.error).toMatchObject({
      data: {
        type: 'INVALID_PARAMS',
        errors: [{ instancePath: '/tags', keyword: 'uniqueItems', params: { i: 40_001, j: 20_000 } }],
      },
    });
    expect(arrivals('tags')).toHaveLength(1);
    await othersStillServed();
  });
});
