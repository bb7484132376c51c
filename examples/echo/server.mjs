// @ts-check
// A small stdio MCP server used as an example upstream and in tests.
//
// stdout is the JSON-RPC channel: never print anything else to it.
// Diagnostics go to stderr.
//
// Tools:     echo {text}, add {a, b}, whoami {}
// Prompts:   greeting {name}
// Resources: echo://readme (static), echo://items/{id} (template)

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
// zod 4.x is installed (hoisted) as a dependency of the SDK; the SDK accepts
// both zod v3 (>=3.25) and v4 schemas.
import { z } from 'zod';

/** @param {string} msg */
function log(msg) {
  process.stderr.write(`[echo ${process.pid}] ${msg}\n`);
}

const server = new McpServer({ name: 'echo', version: '0.1.0' });

server.registerTool(
  'echo',
  {
    description: 'Returns the given text unchanged.',
    inputSchema: { text: z.string().describe('Text to echo back') },
  },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);

server.registerTool(
  'add',
  {
    description: 'Adds two numbers.',
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { sum: z.number() },
  },
  async ({ a, b }) => {
    const sum = a + b;
    return { content: [{ type: 'text', text: String(sum) }], structuredContent: { sum } };
  },
);

server.registerTool(
  'whoami',
  {
    description: 'Returns the process id of the server process that handled the call.',
  },
  async () => ({ content: [{ type: 'text', text: JSON.stringify({ pid: process.pid }) }] }),
);

server.registerPrompt(
  'greeting',
  {
    description: 'Greets someone by name.',
    argsSchema: { name: z.string().describe('Who to greet') },
  },
  ({ name }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }],
  }),
);

server.registerResource(
  'readme',
  'echo://readme',
  { description: 'Static readme of the echo server.', mimeType: 'text/plain' },
  async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'echo server readme' }],
  }),
);

server.registerResource(
  'item',
  new ResourceTemplate('echo://items/{id}', { list: undefined }),
  { description: 'An item by id.', mimeType: 'text/plain' },
  async (uri, variables) => {
    const raw = variables.id;
    const id = Array.isArray(raw) ? raw.join(',') : String(raw);
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${id}` }] };
  },
);

server.server.onerror = (/** @type {unknown} */ err) =>
  log(`error: ${err instanceof Error ? err.message : String(err)}`);

// Exit promptly when the client closes our stdin (e.g. the gateway shuts the worker down).
process.stdin.on('end', () => {
  log('stdin closed, exiting');
  process.exit(0);
});

await server.connect(new StdioServerTransport());
log('ready');
