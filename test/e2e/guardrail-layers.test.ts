/**
 * Guardrails configured at three levels (issue 33): the top level, a virtual server
 * (`servers[].interceptors`) and an upstream (`upstreams[].interceptors`), through a real gateway
 * with the official SDK v1 client in front of two copies of the example echo server. Their order,
 * read off the audit trail of one call: on the way to the upstream top level, endpoint, upstream;
 * on the way back the reverse; within one list its written order both ways. An upstream's list
 * applies to its calls and asks only, and a reload that changes it applies at once.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Gateway } from '../../src/app.js';
import { ERRORS } from '../../src/jsonrpc/errors.js';
import { ECHO_SERVER, exampleConfig, stdioUpstream, toolText } from '../support/gateway.js';
import { WORD_FILTER } from '../support/http-upstream.js';
import { startFromFile } from '../support/reload.js';
import { capturingLogger } from '../support/log-lines.js';

const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
/** Something for each interceptor to find: a word-filter word, an e-mail address, a key, and length. */
const TEXT = `darn, mail bob@example.com the key ${AWS_KEY}`;

const lines: Array<Record<string, unknown>> = [];
let gateway: Gateway;
let base: string;
const clients: Client[] = [];
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  const words = { command: process.execPath, args: [WORD_FILTER] };
  const config = exampleConfig({
    logLevel: 'warn',
    interceptors: [{ name: 'pii', mode: 'audit' }],
    upstreams: [
      stdioUpstream('echo', ECHO_SERVER, {
        interceptors: [
          { name: 'words', server: words, events: ['tools/call'], mode: 'audit' },
          { name: 'size', maxBytes: 8, mode: 'audit' },
        ],
      }),
      stdioUpstream('plain', ECHO_SERVER, { resources: { uris: 'prefixed' } }),
    ],
    servers: [{ path: '/layered', tools: ['echo__*', 'plain__*'], interceptors: [{ name: 'secrets', mode: 'audit' }] }],
  });
  const log = capturingLogger('warn', lines);
  gateway = await buildApp(config, { logger: log, defaultMetrics: false });
  base = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gateway?.close();
  for (const c of cleanups) await c();
});

async function connect(url: URL): Promise<Client> {
  const client = new Client({ name: 'guardrail-layers', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  clients.push(client);
  return client;
}

/** The guardrail audit lines of the calls `act` makes, as `phase interceptor`. */
async function trail(act: () => Promise<unknown>): Promise<string[]> {
  const from = lines.length;
  await act();
  return lines
    .slice(from)
    .filter((l) => l.msg === 'guardrail')
    .map((l) => l.guardrail as { phase: string; interceptor: string })
    .map((g) => `${g.phase} ${g.interceptor}`);
}

describe('interceptor lists at three levels', () => {
  it('run top level, endpoint, upstream on the way up; upstream, endpoint, top level on the way back', async () => {
    const client = await connect(new URL('/layered', base));
    const seen = await trail(() => client.callTool({ name: 'echo__echo', arguments: { text: TEXT } }));
    expect(seen).toEqual([
      'request pii',
      'request secrets',
      'request words',
      // The upstream's own list in its written order (words, then size), then the endpoint's, then the top level's.
      'response words',
      'response size',
      'response secrets',
      'response pii',
    ]);
  });

  it("an upstream's list runs on its calls only", async () => {
    const client = await connect(new URL('/layered', base));
    const seen = await trail(() => client.callTool({ name: 'plain__echo', arguments: { text: TEXT } }));
    expect(seen).toEqual(['request pii', 'request secrets', 'response secrets', 'response pii']);
  });

  it("the main path has no endpoint list: the top level's and the upstream's", async () => {
    const client = await connect(new URL('/mcp', base));
    const seen = await trail(() => client.callTool({ name: 'echo__echo', arguments: { text: TEXT } }));
    expect(seen).toEqual(['request pii', 'request words', 'response words', 'response size', 'response pii']);
  });
});

describe("an upstream's list", () => {
  it('is checked at load like the top level (a size without maxBytes is refused)', async () => {
    const { resolveConfig } = await import('../../src/config/load.js');
    expect(() =>
      resolveConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER, { interceptors: [{ name: 'size' }] })] }, {}),
    ).toThrow(/upstreams\[0\]\.interceptors\[0\]: size needs maxBytes/);
  });

  it('changed by a reload applies at once to the next call, the workers kept', async () => {
    const upstream = (interceptors: unknown[]) => stdioUpstream('echo', ECHO_SERVER, { interceptors });
    const gw = await startFromFile({ upstreams: [upstream([])] }, cleanups);
    const client = await connect(gw.url);
    const echo = async () => toolText(await client.callTool({ name: 'echo__echo', arguments: { text: AWS_KEY } }));
    expect(await echo()).toBe(AWS_KEY);
    gw.file.write({ upstreams: [upstream([{ name: 'secrets', action: 'block', phases: ['response'] }])] });
    const reloaded = await gw.gateway.reload();
    expect(reloaded.outcome).toBe('ok');
    // A change of how the gateway uses the upstream, not of what its workers are.
    expect(reloaded.diff?.changed).toEqual([{ name: 'echo', kind: 'policy', keys: ['interceptors'] }]);
    const refused = await echo().then(
      () => undefined,
      (err: unknown) => err as { code: number },
    );
    expect(refused?.code).toBe(ERRORS.GUARDRAIL_BLOCKED.code);
    // The same session, the same worker: nothing was restarted.
    expect(toolText(await client.callTool({ name: 'echo__echo', arguments: { text: 'plain' } }))).toBe('plain');
  });
});
