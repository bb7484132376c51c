/**
 * A stdio MCP server (raw JSON-RPC, no SDK) whose one tool, `hold {key}`, answers `released <key>`
 * only once the test releases that key: calls that stay in flight exactly as long as a test needs,
 * on a quiet or a loaded machine alike (a sleep of N ms only hopes the checks end first).
 * The release is a file named after the key in a folder of the test's own: any worker process of
 * the pool sees it. The process ends when its stdin does.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stdioLoop } from './raw-stdio-server.js';

const SOURCE = `
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const dir = process.argv[2];
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const held = new Set();
setInterval(() => {
  for (const m of held) {
    const key = String(m.params.arguments.key);
    if (!existsSync(join(dir, key))) continue;
    held.delete(m);
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'released ' + key }] } });
  }
}, 10).unref();
function answer(m) {
  if (m.method === 'initialize') return { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'held', version: '1' } };
  if (m.method === 'tools/list') {
    const inputSchema = { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] };
    return { tools: [{ name: 'hold', description: 'Answers once the test releases key', inputSchema }] };
  }
  if (m.method === 'ping') return {};
  return undefined;
}
${stdioLoop(`if (m.id === undefined || m.method === undefined) continue;
    if (m.method === 'tools/call' && m.params.name === 'hold') { held.add(m); continue; }
    const result = answer(m);
    if (result === undefined) send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
    else send({ jsonrpc: '2.0', id: m.id, result });`)}`;

export interface HeldServer {
  /** The stdio upstream's command and args (spread into stdioUpstream's `extra`, or used as is). */
  readonly command: string;
  readonly args: string[];
  /** Lets every call holding `key`, now and later, answer. */
  release(key: string): void;
  /** Removes the folder (the processes are the gateway's to stop). */
  remove(): void;
}

export function heldServer(): HeldServer {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-held-'));
  const script = join(dir, 'held.cjs');
  writeFileSync(script, SOURCE);
  return {
    command: process.execPath,
    args: [script, dir],
    release: (key) => writeFileSync(join(dir, key), ''),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
