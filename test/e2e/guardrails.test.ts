/**
 * Guardrails (config `interceptors`, issue 33) through a real gateway on loopback, in front of the
 * example echo server over stdio, with the official SDK v1 client: secrets in a tool result come
 * back redacted, a card number in arguments is refused with GUARDRAIL_BLOCKED, audit mode changes
 * nothing, a virtual server's own interceptors run after the top level's; verdicts are counted and
 * audited without the matched text, and each run timed in the duration histogram; allowFields leaves an
 * argument unscanned; a call's progress notifications pass while its result is checked.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Gateway } from '../../src/app.js';
import { ERRORS } from '../../src/jsonrpc/errors.js';
import { ECHO_SERVER, SLOW_SERVER, exampleConfig, stdioUpstream, toolText } from '../support/gateway.js';
import { sample } from '../support/metrics.js';
import { capturingLogger } from '../support/log-lines.js';

// Well-formed fakes: AWS's documented example key id, and a PEM block of made-up base64.
const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const PEM = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun',
  'VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK',
  '-----END RSA PRIVATE KEY-----',
].join('\n');
// Luhn-valid (Visa's test number).
const CARD = '4111 1111 1111 1111';

const lines: Array<Record<string, unknown>> = [];
let gateway: Gateway;
let base: string;
const clients: Client[] = [];

beforeAll(async () => {
  const config = exampleConfig({
    logLevel: 'warn',
    upstreams: [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('slow', SLOW_SERVER)],
    interceptors: [{ name: 'secrets', action: 'redact', phases: ['response'] }],
    servers: [
      { path: '/payments', tools: ['echo__*'], interceptors: [{ name: 'pii', action: 'block', phases: ['request'] }] },
      { path: '/audited', tools: ['echo__*'], interceptors: [{ name: 'pii', action: 'redact', mode: 'audit' }] },
      { path: '/capped', tools: ['echo__*'], interceptors: [{ name: 'size', maxBytes: 64 }] },
      // pii blocks arguments, but not the ones named `text` (echo's own).
      {
        path: '/allowed',
        tools: ['echo__*'],
        interceptors: [{ name: 'pii', action: 'block', phases: ['request'], allowFields: ['text'] }],
      },
      // Both phases on a call that reports progress.
      { path: '/progress', tools: ['slow__*'], interceptors: [{ name: 'pii' }] },
    ],
  });
  const log = capturingLogger('warn', lines);
  gateway = await buildApp(config, { logger: log, defaultMetrics: false });
  base = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gateway?.close();
});

async function connect(path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'guardrails-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, base)));
  clients.push(client);
  return client;
}

const echo = (client: Client, text: string) => client.callTool({ name: 'echo__echo', arguments: { text } });

describe('guardrails through the gateway', () => {
  it('redacts an AWS key and a PEM private key in a tool result, naming each kind', async () => {
    const client = await connect();
    const text = toolText(await echo(client, `key ${AWS_KEY} and\n${PEM}\ndone`));
    expect(text).toBe('key [REDACTED:aws-access-key] and\n[REDACTED:private-key]\ndone');
    expect(text).not.toContain('AKIA');
  });

  it('refuses arguments holding a Luhn-valid card number with GUARDRAIL_BLOCKED, and nothing else', async () => {
    const client = await connect('/payments');
    const err = await echo(client, `pay with ${CARD} please`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ERRORS.GUARDRAIL_BLOCKED.code);
    const data = (err as McpError).data as Record<string, unknown>;
    expect(data).toMatchObject({
      type: 'GUARDRAIL_BLOCKED',
      interceptor: 'pii',
      phase: 'request',
      kinds: ['card-number'],
    });
    expect(JSON.stringify(err)).not.toContain('4111');
    // A number that fails Luhn is not a card: it passes.
    expect(toolText(await echo(client, 'order 4111 1111 1111 1112'))).toBe('order 4111 1111 1111 1112');
    // The same session goes on.
    expect(toolText(await echo(client, 'still here'))).toBe('still here');
  });

  it("audit mode on a virtual server logs and counts, and changes nothing (the top level's run first)", async () => {
    const client = await connect('/audited');
    const text = toolText(await echo(client, 'write to bob@example.com'));
    expect(text).toBe('write to bob@example.com');
    // The top level's secrets run here too, before this server's own.
    expect(toolText(await echo(client, AWS_KEY))).toBe('[REDACTED:aws-access-key]');
    const metrics = await (await fetch(new URL('/metrics', base))).text();
    // Once on the arguments, once on the result (echo sends the text back).
    const wouldRedact = { interceptor: 'pii', verdict: 'would-redact' };
    expect(sample(metrics, 'mcpgw_interceptor_verdicts_total', wouldRedact)).toBe(2);
    expect(sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor: 'pii', verdict: 'blocked' })).toBe(1);
    expect(sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor: 'secrets', verdict: 'redacted' })).toBe(
      2,
    );
    const audit = lines.filter((l) => l.msg === 'guardrail').map((l) => l.guardrail as Record<string, unknown>);
    expect(audit).toContainEqual(
      expect.objectContaining({ interceptor: 'pii', verdict: 'would-redact', kinds: ['email'], method: 'tools/call' }),
    );
    expect(JSON.stringify(lines)).not.toContain('bob@example.com');
    expect(JSON.stringify(lines)).not.toContain(AWS_KEY);
  });

  it('size cuts a long result with a marker saying how much was left out', async () => {
    const client = await connect('/capped');
    const text = toolText(await echo(client, 'x'.repeat(100)));
    expect(text).toBe(`${'x'.repeat(64)}[TRUNCATED:36 bytes]`);
  });

  it("a call's progress notifications reach the client while its result passes the guardrail", async () => {
    const client = await connect('/progress');
    const passes = async () =>
      sample(await (await fetch(new URL('/metrics', base))).text(), 'mcpgw_interceptor_verdicts_total', {
        interceptor: 'pii',
        verdict: 'pass',
      });
    const before = await passes();
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool({ name: 'slow__sleep', arguments: { ms: 150, steps: 3 } }, undefined, {
      onprogress: (p) => progress.push({ progress: p.progress, ...(p.message ? { message: p.message } : {}) }),
    });
    expect(toolText(result)).toBe('slept 150ms');
    expect(progress).toEqual([
      { progress: 1, message: 'step 1 of 3' },
      { progress: 2, message: 'step 2 of 3' },
      { progress: 3, message: 'step 3 of 3' },
    ]);
    // The arguments and the result went through pii: two more passes.
    expect(await passes()).toBe(before + 2);
  });

  it('allowFields through the gateway: an allowed argument is not scanned, so not refused', async () => {
    const client = await connect('/allowed');
    expect(toolText(await echo(client, `pay with ${CARD}`))).toBe(`pay with ${CARD}`);
    // The same argument where pii has no allowFields (/payments) is refused.
    const refused = await echo(await connect('/payments'), `pay with ${CARD}`).then(
      () => undefined,
      (e: unknown) => e as McpError,
    );
    expect(refused?.code).toBe(ERRORS.GUARDRAIL_BLOCKED.code);
  });

  it('times every run in mcpgw_interceptor_duration_seconds: one observation per verdict, per interceptor', async () => {
    const client = await connect();
    await echo(client, 'one more for the record');
    const metrics = await (await fetch(new URL('/metrics', base))).text();
    for (const interceptor of ['secrets', 'pii', 'size']) {
      const verdicts = metrics
        .split('\n')
        .filter((l) => l.startsWith(`mcpgw_interceptor_verdicts_total{interceptor="${interceptor}",`))
        .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
      expect(verdicts).toBeGreaterThan(0);
      const histogram = (suffix: string, labels: Record<string, string> = {}) =>
        sample(metrics, `mcpgw_interceptor_duration_seconds_${suffix}`, { ...labels, interceptor });
      expect(histogram('count')).toBe(verdicts);
      expect(histogram('bucket', { le: '+Inf' })).toBe(verdicts);
      expect(histogram('sum')).toBeGreaterThan(0);
    }
  });
});
