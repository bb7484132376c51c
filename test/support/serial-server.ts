/** A stdio server that serves one call at a time, for the pool's head-of-line tests. */
import { rawStdioServer } from './raw-stdio-server.js';

/** `block` spins for `ms` (its stdin is not read meanwhile), `quick` answers at once; each answers "<tool> <pid>". */
export const SERIAL_SERVER = rawStdioServer(
  `if (m.method === 'initialize') return { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'serial', version: '1' } };
  if (m.method === 'tools/list') return { tools: [{ name: 'block', inputSchema: { type: 'object' } }, { name: 'quick', inputSchema: { type: 'object' } }] };
  if (m.method === 'tools/call') {
    if (m.params.name === 'block') { const end = Date.now() + m.params.arguments.ms; while (Date.now() < end); }
    return { content: [{ type: 'text', text: m.params.name + ' ' + process.pid }] };
  }
  return {};`,
);
