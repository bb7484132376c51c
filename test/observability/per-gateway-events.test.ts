/**
 * Metrics and the audit log are subscribers of the data path's diagnostics_channel events
 * (`mcpgw:*`). Channels are process-wide, and tests run several gateways (replicas) in one
 * process: each gateway's /metrics and audit log count only its own requests, and a subscriber
 * outside the gateway hears every gateway's events, each marked with its gateway. Real gateways,
 * real stdio upstreams, loopback.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Gateway } from '../../src/app.js';
import { DataPathEvents } from '../../src/observability/events.js';
import { ECHO_SERVER, exampleConfig, openSession, post, stdioUpstream } from '../support/gateway.js';
import { sample } from '../support/metrics.js';
import { capturingLogger } from '../support/log-lines.js';

interface AuditedGateway {
  gateway: Gateway;
  url: URL;
  base: string;
  /** The audit lines this gateway's own log received. */
  audit(): Array<Record<string, unknown>>;
}

/** A gateway over the echo upstream, auditing tools/call, with its log captured. */
async function startAudited(): Promise<AuditedGateway> {
  const lines: Array<Record<string, unknown>> = [];
  const config = exampleConfig({
    logLevel: 'warn',
    audit: { methods: ['tools/call'] },
    upstreams: [stdioUpstream('echo', ECHO_SERVER)],
  });
  const log = capturingLogger('warn', lines);
  const gateway = await buildApp(config, { logger: log, defaultMetrics: false });
  const base = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    gateway,
    url: new URL(config.path, base),
    base,
    audit: () => lines.filter((l) => l.component === 'audit').map((l) => l.audit as Record<string, unknown>),
  };
}

const CALLS = (tool: string) => ({
  mcp_method_name: 'tools/call',
  gen_ai_tool_name: tool,
  gen_ai_prompt_name: '',
  error_type: '',
  mcp_protocol_version: '2025-06-18',
  network_transport: 'tcp',
});

async function callCount(gw: AuditedGateway, tool = 'echo__echo'): Promise<number> {
  const text = await (await fetch(new URL('/metrics', gw.base))).text();
  return sample(text, 'mcp_server_operation_duration_seconds_count', CALLS(tool));
}

function call(gw: AuditedGateway, sid: string, id: number, method: string, params: Record<string, unknown>) {
  return post(
    gw.url,
    { jsonrpc: '2.0', id, method, params },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
}

async function echo(gw: AuditedGateway, sid: string, id: number): Promise<void> {
  const r = await call(gw, sid, id, 'tools/call', { name: 'echo__echo', arguments: { text: `call ${id}` } });
  expect(r.json.result.content[0].text).toBe(`call ${id}`);
}

/** What a subscriber outside the gateway hears on mcpgw:request:end. */
const heard: Array<Record<string, unknown>> = [];
const onRequestEnd = (message: unknown) => void heard.push(message as Record<string, unknown>);
let a: AuditedGateway;
let b: AuditedGateway;

beforeAll(async () => {
  diagnosticsChannel.subscribe('mcpgw:request:end', onRequestEnd);
  [a, b] = await Promise.all([startAudited(), startAudited()]);
});

afterAll(async () => {
  diagnosticsChannel.unsubscribe('mcpgw:request:end', onRequestEnd);
  await Promise.all([a?.gateway.close(), b?.gateway.close()]);
});

describe('each gateway in a process hears only its own events', () => {
  it('3 calls to A and 1 to B: A counts 3 and audits 3, B counts 1 and audits 1', async () => {
    const countedA = await callCount(a);
    const countedB = await callCount(b);
    const auditedA = a.audit().length;
    const auditedB = b.audit().length;
    const [sidA, sidB] = await Promise.all([openSession(a.url), openSession(b.url)]);
    for (let i = 1; i <= 3; i++) await echo(a, sidA, i);
    await echo(b, sidB, 1);

    expect(await callCount(a)).toBe(countedA + 3);
    expect(await callCount(b)).toBe(countedB + 1);
    const newA = a.audit().slice(auditedA);
    const newB = b.audit().slice(auditedB);
    expect(newA.map((e) => [e.method, e.target, e.session, e.outcome])).toEqual(
      Array.from({ length: 3 }, () => ['tools/call', 'echo__echo', sidA, 'ok']),
    );
    expect(newB.map((e) => [e.method, e.target, e.session, e.outcome])).toEqual([
      ['tools/call', 'echo__echo', sidB, 'ok'],
    ]);
  });

  it('a subscriber outside the gateway hears request:end with bounded method and tool, the error type and the time', async () => {
    const [sidA, sidB] = await Promise.all([openSession(a.url), openSession(b.url)]);
    heard.length = 0;
    // Bad inputs on A: a tool the catalog lacks, a method nobody knows.
    expect((await call(a, sidA, 1, 'tools/call', { name: 'echo__nope', arguments: {} })).json.error.data.type).toBe(
      'INVALID_PARAMS',
    );
    expect((await call(a, sidA, 2, 'invented/method', {})).json.error.data.type).toBe('METHOD_NOT_FOUND');
    // A normal call on B still succeeds.
    await echo(b, sidB, 3);

    const fields = heard.map((e) => ({
      method: e.method,
      tool: e.tool,
      errorType: e.errorType,
      target: e.target,
      scope: e.scope,
    }));
    expect(fields).toEqual([
      { method: 'tools/call', tool: '', errorType: 'INVALID_PARAMS', target: 'echo__nope', scope: sidA },
      { method: '_other', tool: '', errorType: 'METHOD_NOT_FOUND', target: undefined, scope: sidA },
      { method: 'tools/call', tool: 'echo__echo', errorType: '', target: 'echo__echo', scope: sidB },
    ]);
    for (const e of heard) {
      expect(typeof e.seconds).toBe('number');
      expect(e.seconds as number).toBeGreaterThanOrEqual(0);
      expect(e.stateless).toBe(false);
    }
    // Every event names its gateway: A's two share an id, B's is another.
    expect(typeof heard[0]!.gateway).toBe('string');
    expect(heard[1]!.gateway).toBe(heard[0]!.gateway);
    expect(heard[2]!.gateway).not.toBe(heard[0]!.gateway);
    // The invented name reached no metric label.
    expect(await (await fetch(new URL('/metrics', a.base))).text()).not.toContain('invented/method');
  });

  it('a closed gateway stops hearing its events: what is published under its id later counts nowhere', async () => {
    const c = await startAudited();
    let id: string | undefined;
    try {
      heard.length = 0;
      await echo(c, await openSession(c.url), 1);
      expect(await callCount(c)).toBe(1);
      id = heard[0]?.gateway as string | undefined;
      expect(id).toBeDefined();
    } finally {
      await c.gateway.close();
    }
    // As if C's data path went on publishing after its close.
    new DataPathEvents(id!).emit('request:end', {
      method: 'tools/call',
      tool: 'echo__echo',
      prompt: '',
      errorType: '',
      errorCode: '',
      seconds: 0.001,
      principal: undefined,
      scope: 'late',
      stateless: false,
      protocolVersion: '2025-06-18',
      requestId: undefined,
      target: 'echo__echo',
      toolError: false,
      start: undefined,
    });
    expect(heard.at(-1)).toMatchObject({ gateway: id, scope: 'late' });
    const text = await c.gateway.metrics.registry.metrics();
    expect(sample(text, 'mcp_server_operation_duration_seconds_count', CALLS('echo__echo'))).toBe(1);
    expect(c.audit()).toHaveLength(1);
    // The gateways still running hear their own calls as before.
    const before = await callCount(a);
    await echo(a, await openSession(a.url), 9);
    expect(await callCount(a)).toBe(before + 1);
  });
});
