// @ts-check
// A small stdio MCP server for the many-upstreams scenario, by hand (no SDK: fifty of them start
// at once on 2 cores): 10 tools named tool_0…, each echoing its `text`, and every tools/list
// answered after the delay its first argument gives in ms (0): an upstream slow to list.
//
//   node load/baselines/list-server.mjs 2000
import { createInterface } from 'node:readline';

const delayMs = Number(process.argv[2] ?? 0);
const tools = Array.from({ length: 10 }, (_, i) => ({
  name: `tool_${i}`,
  description: `Echoes its text (tool ${i})`,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
}));

/** @param {unknown} msg */
const send = (msg) => process.stdout.write(`${JSON.stringify(msg)}\n`);

/** @param {any} req */
function answer(req) {
  switch (req.method) {
    case 'initialize':
      return {
        protocolVersion: req.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'list-server', version: '1.0.0' },
      };
    case 'ping':
      return {};
    case 'tools/call':
      return { content: [{ type: 'text', text: String(req.params?.arguments?.text ?? '') }] };
    default:
      return undefined;
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  const req = JSON.parse(line);
  if (req.id === undefined) return;
  if (req.method === 'tools/list') {
    setTimeout(() => send({ jsonrpc: '2.0', id: req.id, result: { tools } }), delayMs);
    return;
  }
  const result = answer(req);
  send(
    result === undefined
      ? { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: `Method not found: ${req.method}` } }
      : { jsonrpc: '2.0', id: req.id, result },
  );
});
process.stdin.on('end', () => process.exit(0));
