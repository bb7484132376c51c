/**
 * The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli 1.0.3, the CLI package of the Inspector 1.0.3, the last line on SDK v1; the launcher package declares Node >= 22) with
 * `--transport sse` against the gateway: it lists and calls tools over legacy HTTP+SSE. Run as a
 * real child process, as a person would from a shell.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { everythingConfig } from './connection-flow.js';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
/**
 * The CLI proper. `mcp-inspector --cli` (the launcher of @modelcontextprotocol/inspector) needs
 * commander 13, which that package uses without declaring it: npm hoists whichever commander
 * another package brought (2.x here) and the launcher dies on `allowExcessArguments is not a
 * function`. Its CLI package runs the same code with its own commander, on Node 20, when started
 * from its build folder: it looks for its package.json relative to the working directory but
 * imports it relative to itself (from anywhere else it fails with "Cannot find module
 * …/@modelcontextprotocol/package.json").
 */
const INSPECTOR_CLI = require.resolve('@modelcontextprotocol/inspector-cli/build/index.js');
const INSPECTOR_CWD = dirname(INSPECTOR_CLI);

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(everythingConfig());
});

afterAll(async () => {
  await gw?.stop();
});

async function inspector(...args: string[]): Promise<unknown> {
  const { stdout } = await run(
    process.execPath,
    [INSPECTOR_CLI, new URL('/sse', gw.base).href, '--transport', 'sse', ...args],
    { timeout: 30_000, cwd: INSPECTOR_CWD },
  );
  return JSON.parse(stdout) as unknown;
}

describe('the Inspector CLI with --transport sse', () => {
  it('lists the tools', async () => {
    const listed = (await inspector('--method', 'tools/list')) as { tools: Array<{ name: string }> };
    expect(listed.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['everything__echo', 'slow__sleep']));
  });

  it('calls a tool', async () => {
    const called = (await inspector(
      '--method',
      'tools/call',
      '--tool-name',
      'everything__echo',
      '--tool-arg',
      'message=through the legacy transport',
    )) as { content: Array<{ text: string }> };
    expect(called.content[0]?.text).toContain('through the legacy transport');
  });
});
