/**
 * Interceptor servers (SEP-2624 draft, config `interceptors: [{ name, server, events, onError }]`,
 * issue 33) through a real gateway on loopback with the official SDK v1 client, in front of the
 * example echo server: examples/interceptors/word-filter over stdio and over Streamable HTTP, each
 * validating (a denied word refused with GUARDRAIL_BLOCKED naming the entry) and mutating (request
 * arguments and results rewritten); a slow one past its timeoutMs and a crashing one follow onError
 * (allow passes, counted as verdict error; deny refuses with INTERCEPTOR_FAILED) within bounded
 * time; one answering garbage is a protocol failure; no interceptor process outlives the gateway,
 * in-process or as its own OS process (node dist/main.js: `npm run build` first).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Gateway } from '../../src/app.js';
import { ERRORS } from '../../src/jsonrpc/errors.js';
import { childPidsRunning } from '../support/child-processes.js';
import { ECHO_SERVER, exampleConfig, isAlive, stdioUpstream, toolText } from '../support/gateway.js';
import { childrenOf, spawnGateway } from '../support/gateway-process.js';
import { startWordFilterHttp, WORD_FILTER, type HttpServerProcess } from '../support/http-upstream.js';
import { sample } from '../support/metrics.js';
import { until } from '../support/wait.js';

const REPLACE = ['--replace', 'darn=d**n,5=five'];
const stdio = (args: string[] = []) => ({ command: process.execPath, args: [WORD_FILTER, ...REPLACE, ...args] });
const entry = (name: string, server: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name,
  server,
  events: ['tools/call', 'prompts/get', 'resources/read'],
  ...extra,
});
const view = (path: string, interceptor: Record<string, unknown>) => ({
  path,
  tools: ['echo__*'],
  interceptors: [interceptor],
});

let gateway: Gateway | undefined;
let base: string;
let httpFilter: HttpServerProcess;
const clients: Client[] = [];

beforeAll(async () => {
  httpFilter = await startWordFilterHttp(REPLACE);
  const config = exampleConfig({
    logLevel: 'silent',
    upstreams: [stdioUpstream('echo', ECHO_SERVER)],
    servers: [
      view('/stdio', entry('words-stdio', stdio())),
      view('/http', entry('words-http', { url: httpFilter.url })),
      view('/slow-allow', entry('slow', stdio(['--delay-ms', '5000']), { timeoutMs: 300, onError: 'allow' })),
      view('/slow-deny', entry('slow', stdio(['--delay-ms', '5000']), { timeoutMs: 300 })),
      view('/crash-allow', entry('crashy', stdio(['--crash']), { onError: 'allow' })),
      view('/crash-deny', entry('crashy', stdio(['--crash']))),
      view('/garbage', entry('garbled', stdio(['--garbage']))),
      view('/list-garbage', entry('garbled-list', stdio(['--list-garbage']))),
      view('/huge', entry('huge', stdio(['--huge']), { timeoutMs: 5000 })),
      view('/audit', entry('words-audit', stdio(), { mode: 'audit' })),
    ],
  });
  gateway = await buildApp(config, { logger: pino({ level: 'silent' }), defaultMetrics: false });
  base = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
}, 30_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gateway?.close();
  await httpFilter?.stop();
});

async function connect(path: string): Promise<Client> {
  const client = new Client({ name: 'interceptor-servers-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, base)));
  clients.push(client);
  return client;
}

const echo = (client: Client, text: string) => client.callTool({ name: 'echo__echo', arguments: { text } });
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as McpError,
  );

describe.each([
  ['stdio', '/stdio', 'words-stdio'],
  ['Streamable HTTP', '/http', 'words-http'],
])('an interceptor server over %s', (_, path, name) => {
  it('mutates the arguments on the way up and the result on the way back', async () => {
    const client = await connect(path);
    expect(toolText(await echo(client, 'darn it'))).toBe('d**n it');
    // The arguments are numbers (left alone); the result's text "5" is rewritten on the way back.
    const added = await client.callTool({ name: 'echo__add', arguments: { a: 2, b: 3 } });
    expect(toolText(added)).toBe('five');
    expect(toolText(await echo(client, 'plain'))).toBe('plain');
  });

  it('validates: a denied word is refused with GUARDRAIL_BLOCKED naming the entry and its interceptor', async () => {
    const client = await connect(path);
    const err = await refusal(echo(client, 'something Forbidden here'));
    expect(err).toBeInstanceOf(McpError);
    expect(err!.code).toBe(ERRORS.GUARDRAIL_BLOCKED.code);
    expect(err!.data).toMatchObject({
      type: 'GUARDRAIL_BLOCKED',
      interceptor: name,
      phase: 'request',
      kinds: ['word-filter/deny'],
    });
    expect(JSON.stringify(err)).not.toContain('Forbidden');
    const metrics = await (await fetch(new URL('/metrics', base))).text();
    expect(sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor: name, verdict: 'blocked' })).toBe(1);
    expect(sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor: name, verdict: 'mutated' })).toBe(2);
  });
});

describe('an interceptor server that fails follows onError, within bounded time', () => {
  it('past its timeoutMs: allow passes the call unchanged (counted as error)', async () => {
    const client = await connect('/slow-allow');
    const started = Date.now();
    expect(toolText(await echo(client, 'darn slow'))).toBe('darn slow');
    // Two phases, each cut at 300 ms (the first also waits for the child to start).
    expect(Date.now() - started).toBeLessThan(2500);
    const metrics = await (await fetch(new URL('/metrics', base))).text();
    expect(sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor: 'slow', verdict: 'error' })).toBe(2);
  });

  it('past its timeoutMs: deny refuses with INTERCEPTOR_FAILED, reason timeout', async () => {
    const client = await connect('/slow-deny');
    const started = Date.now();
    const err = await refusal(echo(client, 'hello'));
    expect(Date.now() - started).toBeLessThan(1500);
    expect(err!.code).toBe(ERRORS.INTERCEPTOR_FAILED.code);
    expect(err!.data).toMatchObject({ type: 'INTERCEPTOR_FAILED', interceptor: 'slow', reason: 'timeout' });
  });

  it('a crash: allow passes, deny refuses with INTERCEPTOR_FAILED; the session goes on', async () => {
    const allowing = await connect('/crash-allow');
    expect(toolText(await echo(allowing, 'darn crash'))).toBe('darn crash');
    const denying = await connect('/crash-deny');
    const err = await refusal(echo(denying, 'hello'));
    expect(err!.data).toMatchObject({ type: 'INTERCEPTOR_FAILED', interceptor: 'crashy', reason: 'unavailable' });
    // Right after, the back-off answers at once instead of starting the child again.
    const again = await refusal(echo(denying, 'hello'));
    expect(again!.data).toMatchObject({ type: 'INTERCEPTOR_FAILED', reason: 'unavailable' });
  });

  it('an answer that is not an interceptor result is a protocol failure (deny)', async () => {
    const client = await connect('/garbage');
    const err = await refusal(echo(client, 'hello'));
    expect(err!.data).toMatchObject({ type: 'INTERCEPTOR_FAILED', interceptor: 'garbled', reason: 'protocol' });
  });

  it('a list that is not interceptor descriptors is a protocol failure (deny)', async () => {
    const client = await connect('/list-garbage');
    const err = await refusal(echo(client, 'hello'));
    expect(err!.data).toMatchObject({ type: 'INTERCEPTOR_FAILED', interceptor: 'garbled-list', reason: 'protocol' });
  });

  it('a reply over 4 MiB is refused as too-large (deny), not passed on', async () => {
    const client = await connect('/huge');
    const err = await refusal(echo(client, 'hello'));
    expect(err!.data).toMatchObject({ type: 'INTERCEPTOR_FAILED', interceptor: 'huge', reason: 'too-large' });
  });

  it('audit mode: a refusal and a mutation are counted, nothing is changed', async () => {
    const client = await connect('/audit');
    expect(toolText(await echo(client, 'darn forbidden'))).toBe('darn forbidden');
    const metrics = await (await fetch(new URL('/metrics', base))).text();
    const count = (verdict: string) =>
      sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor: 'words-audit', verdict });
    expect(count('would-block')).toBe(1);
  });
});

describe('shutdown', () => {
  it('leaves no interceptor server process behind', async () => {
    // The gateway's children; the HTTP one is this test's own.
    const children = () => childPidsRunning('word-filter.mjs').filter((pid) => pid !== httpFilter.pid);
    expect(children().length).toBeGreaterThan(0);
    await gateway!.close();
    gateway = undefined;
    await until('the interceptor servers to exit', () => children().length === 0, 5000);
  });
});

describe('a gateway process (node dist/main.js) with an interceptor server over stdio', () => {
  it('validates and mutates through the SDK client, and ends the server on SIGTERM', async () => {
    const proc = await spawnGateway({
      logLevel: 'warn',
      upstreams: [stdioUpstream('echo', ECHO_SERVER)],
      interceptors: [entry('words', stdio())],
    });
    const client = new Client({ name: 'interceptor-servers-process', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(proc.url));
      expect(toolText(await echo(client, 'darn it'))).toBe('d**n it');
      const err = await refusal(echo(client, 'forbidden'));
      expect(err!.data).toMatchObject({ type: 'GUARDRAIL_BLOCKED', interceptor: 'words' });
      const filters = () =>
        childrenOf(proc.pid).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('word-filter'));
      const running = filters();
      expect(running).toHaveLength(1);
      await client.close();
      await proc.stop();
      expect(running.filter((pid) => isAlive(pid))).toEqual([]);
    } finally {
      await client.close().catch(() => undefined);
      await proc.stop();
    }
  }, 30_000);
});
