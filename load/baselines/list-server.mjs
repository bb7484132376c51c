// @ts-check
// A small stdio MCP server for the many-upstreams and payloads scenarios, by hand (no SDK: fifty of
// them start at once on 2 cores, and the SDK's stdio reader refuses lines over 10 MiB): 10 tools named tool_0…, each echoing its `text`, and every tools/list
// answered after the delay its first argument gives in ms (0): an upstream slow to list.
//
//   node load/baselines/list-server.mjs 2000

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

/** @param {string} line */
function onLine(line) {
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
}

// Lines split by hand: node:readline takes seconds over one 10 MB line (the payloads scenario's),
// so a line's chunks are kept as they come and joined once its newline arrives.
/** @type {Buffer[]} */
let pending = [];
process.stdin.on('data', (/** @type {Buffer} */ chunk) => {
  let start = 0;
  for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
    pending.push(chunk.subarray(start, nl));
    onLine(Buffer.concat(pending).toString('utf8'));
    pending = [];
    start = nl + 1;
  }
  if (start < chunk.length) pending.push(chunk.subarray(start));
});
process.stdin.on('end', () => process.exit(0));
