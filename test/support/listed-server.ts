/**
 * A stdio MCP server (raw JSON-RPC) whose tools the test sets: every tools/list reads them from a
 * file of the test's own, and is counted in another (one line per list, with the client's name),
 * so a test changes what an upstream lists while it runs and sees how often it was asked. A call
 * of any listed tool answers `<name> ran`; with `exitUnless`, a worker initialized by any other
 * client than that one exits at once (a session's own worker that cannot start); with
 * `requires`, a process exits at once while that file does not exist (an upstream that is down
 * until the test brings it up).
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileLines } from './file-lines.js';
import { rawStdioServer } from './raw-stdio-server.js';

export interface ListedServer {
  /** Its upstream entry (stdio); `extra` is merged in (mode, prefix, tools…). */
  upstream(name: string, extra?: Record<string, unknown>): Record<string, unknown>;
  /** What the next tools/list answers. */
  setTools(names: readonly string[]): void;
  /** How many tools/list it answered so far (all its processes). */
  lists(): number;
  /** The client names its processes were initialized by, in order. */
  initializedBy(): string[];
  remove(): void;
}

export function listedServer(
  tools: readonly string[],
  options: { exitUnless?: string; requires?: string } = {},
): ListedServer {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-listed-'));
  const toolsFile = join(dir, 'tools.json');
  const log = join(dir, 'log');
  const setTools = (names: readonly string[]) => writeFileSync(toolsFile, JSON.stringify(names));
  setTools(tools);
  appendFileSync(log, '');
  const exit =
    options.exitUnless === undefined
      ? ''
      : `if (m.params.clientInfo.name !== ${JSON.stringify(options.exitUnless)}) process.exit(5);`;
  const source = rawStdioServer(
    `if (m.method === 'initialize') { ${exit} fs.appendFileSync(LOG, 'init ' + m.params.clientInfo.name + '\\n'); return { protocolVersion: m.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'listed', version: '1' } }; }
  if (m.method === 'tools/list') { fs.appendFileSync(LOG, 'list\\n'); return { tools: JSON.parse(fs.readFileSync(TOOLS, 'utf8')).map((name) => ({ name, inputSchema: { type: 'object' } })) }; }
  if (m.method === 'tools/call') return { content: [{ type: 'text', text: m.params.name + ' ran' }] };
  return {};`,
    `const fs = require('node:fs');
const TOOLS = ${JSON.stringify(toolsFile)};
const LOG = ${JSON.stringify(log)};
${options.requires === undefined ? '' : `if (!fs.existsSync(${JSON.stringify(options.requires)})) process.exit(3);`}`,
  );
  return {
    upstream: (name, extra = {}) => ({
      name,
      transport: 'stdio',
      command: process.execPath,
      args: ['-e', source],
      ...extra,
    }),
    setTools,
    lists: () => fileLines(log).filter((l) => l === 'list').length,
    initializedBy: () =>
      fileLines(log)
        .filter((l) => l.startsWith('init '))
        .map((l) => l.slice(5)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
