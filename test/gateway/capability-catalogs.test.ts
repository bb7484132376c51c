/**
 * A stateless (2026-07-28) client sees the catalog of its own capabilities, not of the gateway's
 * probe: for each of sampling, elicitation form, elicitation url and roots, a client with it
 * lists and calls the tools that need it, and one without it does not list them and gets the
 * typed -32021 (HTTP 400) naming what to declare when it calls one, which never reaches the
 * upstream. A variant is probed once per capability set, not per request. The gateway's probe
 * declares roots and answers roots/list with an empty list (it used to answer -32601).
 * Upstreams (mode per-session, real child processes): a raw stdio server listing a tool per
 * capability, and the official server-everything with a tap on its stdio; clients: raw 2026 POSTs.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, everythingUpstream } from '../support/everything.js';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { statelessMeta, postStateless } from '../support/stateless.js';
import { readTap, tappedStdio } from '../support/stdio-tap.js';

const dir = mkdtempSync(join(tmpdir(), 'capability-catalogs-'));
const CALLS = join(dir, 'calls.log');
const STARTS = join(dir, 'starts.log');
const TAP = join(dir, 'everything.tap');
const ROOTS = join(dir, 'roots.log');

/**
 * Lists `needs_<part>` to a client declaring that part (elicitation {} is form); records each
 * start and call. Asks the gateway's own probe for its roots (as server-everything asks every
 * client declaring them) and records the answer before it lists anything.
 */
const CAPABILITY_TOOLS_SERVER = `
const fs = require('node:fs');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
let caps = {};
let client = '';
let rootsAnswered = Promise.resolve();
let answerRoots = () => undefined;
function tools() {
  const e = caps.elicitation;
  const has = { sampling: caps.sampling !== undefined, form: e !== undefined && (e.form !== undefined || e.url === undefined), url: e !== undefined && e.url !== undefined, roots: caps.roots !== undefined };
  return [{ name: 'always', inputSchema: { type: 'object' } }, ...Object.keys(has).filter((k) => has[k]).map((k) => ({ name: 'needs_' + k, inputSchema: { type: 'object' } }))];
}
async function handle(m) {
  if (m.method === undefined) {
    if (m.id === 'roots') { fs.appendFileSync(${JSON.stringify(ROOTS)}, JSON.stringify(m) + '\\n'); answerRoots(); }
    return;
  }
  if (m.method === 'notifications/initialized' && client === 'mcp-gateway' && caps.roots !== undefined) {
    rootsAnswered = new Promise((r) => { answerRoots = r; setTimeout(r, 2000); });
    send({ jsonrpc: '2.0', id: 'roots', method: 'roots/list', params: {} });
  }
  if (m.id === undefined) return;
  let result = {};
  if (m.method === 'initialize') {
    caps = m.params.capabilities || {};
    client = m.params.clientInfo.name;
    fs.appendFileSync(${JSON.stringify(STARTS)}, JSON.stringify({ client, caps }) + '\\n');
    result = { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'caps', version: '1' } };
  } else if (m.method === 'tools/list') {
    await rootsAnswered;
    result = { tools: tools() };
  } else if (m.method === 'tools/call') {
    fs.appendFileSync(${JSON.stringify(CALLS)}, m.params.name + '\\n');
    result = { content: [{ type: 'text', text: m.params.name + ' ran' }] };
  }
  send({ jsonrpc: '2.0', id: m.id, result });
}
let buf = '';
process.stdin.on('data', (c) => {
  buf += c;
  let nl;
  while ((nl = buf.indexOf('\\n')) !== -1) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (line.trim()) void handle(JSON.parse(line));
  }
});
process.stdin.on('end', () => process.exit(0));
`;

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

/** The four parts, each as a client declares it alone, and as -32021's requiredCapabilities names it. */
const PARTS = {
  sampling: { sampling: {} },
  form: { elicitation: { form: {} } },
  url: { elicitation: { url: {} } },
  roots: { roots: {} },
} as const;
type Part = keyof typeof PARTS;

/** Capabilities declaring `parts` and nothing else. */
function declaring(parts: readonly Part[]): Record<string, unknown> {
  const caps: Record<string, unknown> = {};
  if (parts.includes('sampling')) caps.sampling = {};
  if (parts.includes('form') || parts.includes('url'))
    caps.elicitation = {
      ...(parts.includes('form') ? { form: {} } : {}),
      ...(parts.includes('url') ? { url: {} } : {}),
    };
  if (parts.includes('roots')) caps.roots = {};
  return caps;
}

let gw: RunningGateway;
let id = 0;

const listTools = async (caps: Record<string, unknown>) => {
  const r = await postStateless(gw, ++id, 'tools/list', { _meta: statelessMeta(caps) });
  return (r.json.result.tools as Array<{ name: string }>)
    .map((t) => t.name)
    .filter((n) => n.startsWith('caps__'))
    .sort();
};
const callTool = (caps: Record<string, unknown>, name: string, args: Record<string, unknown> = {}) =>
  postStateless(gw, ++id, 'tools/call', { name, arguments: args, _meta: statelessMeta(caps) });

beforeAll(async () => {
  const tapped = tappedStdio(EVERYTHING, TAP);
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        {
          name: 'caps',
          transport: 'stdio',
          command: process.execPath,
          args: ['-e', CAPABILITY_TOOLS_SERVER],
          mode: 'per-session',
          pool: { max: 8 },
        },
        everythingUpstream('everything', {
          args: [...tapped.args, 'stdio'],
          env: tapped.env,
          mode: 'per-session',
          pool: { max: 8 },
        }),
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a stateless client sees the tools its own capabilities get', () => {
  for (const part of Object.keys(PARTS) as Part[]) {
    it(`${part}: listed and called with it; without it, not listed, and -32021 naming it`, async () => {
      const others = (Object.keys(PARTS) as Part[]).filter((p) => p !== part);
      const tool = `caps__needs_${part}`;
      expect(await listTools(declaring([part]))).toEqual(['caps__always', tool]);
      expect(toolText((await callTool(declaring([part]), tool)).json.result)).toBe(`needs_${part} ran`);
      const without = declaring(others);
      expect(await listTools(without)).not.toContain(tool);
      const before = lines(CALLS).length;
      const refused = await callTool(without, tool);
      expect(refused.status).toBe(400);
      expect(refused.json.error).toMatchObject({ code: -32021, data: { requiredCapabilities: PARTS[part] } });
      expect(refused.json.error.message).toContain(`Tool ${tool}`);
      // Never reached the upstream; a tool it can use still works.
      expect(lines(CALLS).length).toBe(before);
      expect(toolText((await callTool(without, 'caps__always')).json.result)).toBe('always ran');
    });
  }

  it('one probe per capability set: more clients with the same set start no probe', async () => {
    const probes = () => lines(STARTS).filter((l) => JSON.parse(l).client === 'mcp-gateway').length;
    await listTools(declaring(['sampling', 'roots']));
    const after = probes();
    for (let i = 0; i < 3; i++)
      expect(await listTools(declaring(['sampling', 'roots']))).toEqual([
        'caps__always',
        'caps__needs_roots',
        'caps__needs_sampling',
      ]);
    expect(probes()).toBe(after);
    // A client declaring all four reads the shared catalog.
    expect(await listTools(declaring(['sampling', 'form', 'url', 'roots']))).toEqual([
      'caps__always',
      'caps__needs_form',
      'caps__needs_roots',
      'caps__needs_sampling',
      'caps__needs_url',
    ]);
    expect(probes()).toBe(after);
  });

  it("the gateway's probe declares roots and answers roots/list with an empty list, not -32601", () => {
    const answers = lines(ROOTS).map((l) => JSON.parse(l) as { result?: unknown; error?: unknown });
    expect(answers.length).toBeGreaterThan(0);
    for (const a of answers) {
      expect(a.error).toBeUndefined();
      expect(a.result).toEqual({ roots: [] });
    }
  });
});

describe('server-everything through the gateway, to stateless clients', () => {
  it('a client declaring elicitation form and url lists trigger-url-elicitation, and its call is an input_required round', async () => {
    const caps = { elicitation: { form: {}, url: {} } };
    const r = await postStateless(gw, ++id, 'tools/list', { _meta: statelessMeta(caps) });
    const names = (r.json.result.tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toContain('everything__trigger-url-elicitation');
    expect(names).not.toContain('everything__trigger-sampling-request');
    const args = { url: 'http://127.0.0.1/consent' };
    const call = await callTool(caps, 'everything__trigger-url-elicitation', args);
    expect(call.json.error).toBeUndefined();
    expect(call.json.result).toMatchObject({ resultType: 'input_required' });
    const [[key, ask]] = Object.entries(
      call.json.result.inputRequests as Record<string, { method: string; params: { mode: string } }>,
    );
    expect(ask).toMatchObject({ method: 'elicitation/create', params: { mode: 'url' } });
    // The round is answered: the call ends (nothing waits on its worker).
    const retry = await postStateless(gw, ++id, 'tools/call', {
      name: 'everything__trigger-url-elicitation',
      arguments: args,
      inputResponses: { [key!]: { action: 'decline' } },
      requestState: call.json.result.requestState,
      _meta: statelessMeta(caps),
    });
    expect(retry.json.result).toMatchObject({ resultType: 'complete' });
  });

  it('a client without sampling: trigger-sampling-request is not listed, and its call is -32021 (not the upstream\'s "not found")', async () => {
    const caps = { elicitation: {}, roots: {} };
    const r = await postStateless(gw, ++id, 'tools/list', { _meta: statelessMeta(caps) });
    expect((r.json.result.tools as Array<{ name: string }>).map((t) => t.name)).not.toContain(
      'everything__trigger-sampling-request',
    );
    const call = await callTool(caps, 'everything__trigger-sampling-request');
    expect(call.status).toBe(400);
    expect(call.json.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    const tools = readTap(TAP)
      .filter((t) => t.dir === 'IN' && t.message.method === 'tools/call')
      .map((t) => t.message.params.name);
    expect(tools).not.toContain('trigger-sampling-request');
  });

  it('its elicitation and roots tools: -32021 names one capability that lists them', async () => {
    const caps = { sampling: {} };
    const elicit = await callTool(caps, 'everything__trigger-elicitation-request');
    expect(elicit.json.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
    const roots = await callTool(caps, 'everything__get-roots-list');
    expect(roots.json.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { roots: {} } } });
  });

  it('afterwards a 2026 client is served and nothing is left held', async () => {
    expect(toolText((await callTool({}, 'everything__echo', { message: 'hi' })).json.result)).toContain('hi');
    await untilNothingHeld(gw);
  });
});
