/**
 * The official @modelcontextprotocol/server-everything as a stdio upstream (a real child
 * process), and an SDK v1 client for a gateway endpoint (a virtual server's path, with a key).
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { stdioUpstream } from './gateway.js';

const require = createRequire(import.meta.url);
export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

export function everythingUpstream(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return stdioUpstream(name, EVERYTHING, { args: [EVERYTHING, 'stdio'], ...extra });
}

/** A connected SDK client for `url`; `key` goes as `Authorization: Bearer <key>`. */
export async function connectClient(
  url: URL,
  key?: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'servers-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(
    url,
    key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : undefined,
  );
  await client.connect(transport);
  return { client, transport };
}

/** A curated virtual server over everythingUpstream('ev'): a rename, a description, a fixed argument, a default. */
export const READER = {
  name: 'reader',
  path: '/mcp/reader',
  tools: ['ev__echo', 'ev__get-sum'],
  prompts: ['ev__simple*'],
  resources: ['demo://resource/static/document/features.md', 'demo://resource/dynamic/text/*'],
  overrides: {
    ev__echo: {
      name: 'say',
      description: 'Says the message back',
      arguments: { defaults: { message: 'hello by default' } },
    },
    'ev__get-sum': {
      name: 'add-ten',
      title: 'Adds ten',
      annotations: { openWorldHint: true },
      arguments: { fixed: { b: 10 } },
    },
  },
};
