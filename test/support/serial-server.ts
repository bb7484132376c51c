/** A stdio server that serves one call at a time, for the pool's head-of-line tests. */
import { rawStdioServer } from './raw-stdio-server.js';

/**
 * `block` holds its event loop (its stdin is not read meanwhile), as a synchronous tool does: for
 * `ms` spinning, or with `until` (a file path) asleep in Atomics.wait until that file exists, so
 * that it ends when the test says and burns no CPU the gateway's other workers would need to
 * start. `quick` answers at once. Each answers "<tool> <pid>". Written as an .mjs file.
 */
export const SERIAL_SERVER = rawStdioServer(
  `if (m.method === 'initialize') return { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'serial', version: '1' } };
  if (m.method === 'tools/list') return { tools: [{ name: 'block', inputSchema: { type: 'object' } }, { name: 'quick', inputSchema: { type: 'object' } }] };
  if (m.method === 'tools/call') {
    const a = m.params.arguments ?? {};
    if (m.params.name === 'block' && a.until) while (!existsSync(a.until)) Atomics.wait(nap, 0, 0, 10);
    else if (m.params.name === 'block') { const end = Date.now() + a.ms; while (Date.now() < end); }
    return { content: [{ type: 'text', text: m.params.name + ' ' + process.pid }] };
  }
  return {};`,
  `import { existsSync } from 'node:fs';
const nap = new Int32Array(new SharedArrayBuffer(4));`,
);
