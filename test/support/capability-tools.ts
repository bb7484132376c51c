/**
 * A raw stdio MCP server whose tools depend on its client's capabilities: `always` to every
 * client, `needs_sampling` only to one that declared sampling at initialize. In mode
 * per-session each session's worker is initialized with its client's capabilities, so two
 * clients see different lists. With `callsFile`, each tools/call it runs is appended there.
 */
import { rawStdioServer } from './raw-stdio-server.js';

export function capabilityToolsServer(callsFile?: string): string {
  const record =
    callsFile === undefined
      ? ''
      : `require('node:fs').appendFileSync(${JSON.stringify(callsFile)}, m.params.name + '\\n'); `;
  return rawStdioServer(
    `if (m.method === 'initialize') { caps = m.params.capabilities || {}; return { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'caps', version: '1' } }; }
  if (m.method === 'tools/list') return { tools: caps.sampling ? [always, sampling] : [always] };
  if (m.method === 'tools/call') { ${record}return { content: [{ type: 'text', text: m.params.name + ' ran' }] }; }
  return {};`,
    `let caps = {};
const always = { name: 'always', inputSchema: { type: 'object' } };
const sampling = { name: 'needs_sampling', description: 'Only for clients that can sample', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } };`,
  );
}

/** Its upstream entry (stdio, mode per-session). */
export function capabilityToolsUpstream(name: string, callsFile?: string): Record<string, unknown> {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: ['-e', capabilityToolsServer(callsFile)],
    mode: 'per-session',
    pool: { max: 8 },
  };
}
