/**
 * Tool search over a catalog large enough to be ranked on the search thread (3,000 tools), in a
 * gateway process started from dist/ (the thread runs the compiled program there), with the
 * official SDK v1 client: found by a query, called through call_tool, searches at once each
 * answered with its own result.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THREAD_FROM_TOOLS } from '../../src/tool-search/search-thread.js';
import { toolText } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { listedServer, type ListedServer } from '../support/listed-server.js';

const VERBS = ['get', 'list', 'create', 'delete', 'update', 'send'];
const NOUNS = ['file', 'issue', 'message', 'user', 'invoice', 'report'];
const UNIQUE = ['zebra_report', 'compile_latex', 'rotate_keys', 'archive_mailbox'];
const NAMES = [...Array.from({ length: 3000 }, (_, i) => `${VERBS[i % 6]}_${NOUNS[(i >> 2) % 6]}_${i}`), ...UNIQUE];

let listed: ListedServer;
let gw: GatewayProcess;
let client: Client;

beforeAll(async () => {
  expect(NAMES.length).toBeGreaterThanOrEqual(THREAD_FROM_TOOLS);
  listed = listedServer(NAMES);
  gw = await spawnGateway({ upstreams: [listed.upstream('big')], toolSearch: { enabled: true } });
  client = new Client({ name: 'tool-search-large', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(gw.url));
}, 60_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.stop();
  listed?.remove();
});

const search = async (query: string) =>
  (
    (await client.callTool({ name: 'search_tools', arguments: { query, limit: 3 } })).structuredContent as {
      tools: Array<{ name: string }>;
    }
  ).tools.map((t) => t.name);

describe('tool search on the search thread (3,004 tools, dist/)', () => {
  it('lists the two gateway tools, saying how many are behind them; finds one and calls it', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
    expect(tools[0]!.description).toContain(`${NAMES.length} tools`);
    expect((await search('zebra report'))[0]).toBe('big__zebra_report');
    const ran = await client.callTool({ name: 'call_tool', arguments: { name: 'big__zebra_report' } });
    expect(toolText(ran)).toBe('zebra_report ran');
  });

  it('searches at once are each answered with their own result', async () => {
    const queries = ['compile latex', 'rotate keys', 'archive mailbox', 'zebra report'];
    const answers = await Promise.all(queries.map((q) => search(q)));
    expect(answers.map((a) => a[0])).toEqual(
      UNIQUE.slice(1)
        .concat(UNIQUE[0]!)
        .map((n) => `big__${n}`),
    );
  });
});
