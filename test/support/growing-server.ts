/**
 * A per-session stdio upstream whose lists change: each worker lists `base` and `grow`, and a
 * call of `grow` adds `extra` to that worker's own list and sends
 * `notifications/tools/list_changed` (before its answer). Other calls answer "<name> ran".
 */
import { rawStdioServer } from './raw-stdio-server.js';

export const GROWING_SERVER = rawStdioServer(
  `if (m.method === 'initialize') return { protocolVersion: m.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'growing', version: '1' } };
  if (m.method === 'tools/list') return { tools: grown ? [base, grow, extra] : [base, grow] };
  if (m.method === 'tools/call') return { content: [{ type: 'text', text: m.params.name + ' ran' }] };
  return {};`,
  `let grown = false;
const tool = (name) => ({ name, inputSchema: { type: 'object' } });
const base = tool('base'), grow = tool('grow'), extra = tool('extra');`,
  `if (m.method === 'tools/call' && m.params.name === 'grow') { grown = true; send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }); }`,
);

/** The upstream `name` (prefix `name__`) running GROWING_SERVER, a worker per session. */
export function growingUpstream(name = 'ups'): Record<string, unknown> {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: ['-e', GROWING_SERVER],
    mode: 'per-session',
    pool: { max: 8 },
  };
}
