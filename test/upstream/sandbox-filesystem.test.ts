/**
 * The official @modelcontextprotocol/server-filesystem behind a real gateway, sandboxed
 * (`upstreams[].sandbox`, bubblewrap, network none) with one writable directory and one read-only
 * one, both its allowed directories: an SDK client lists its tools, writes a file the host sees,
 * reads it back; a write outside its allowed directories is the server's own refusal, a write to
 * the read-only one (which the server allows) the sandbox's.
 */
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from '../support/everything.js';
import { ROOT, exampleConfig, startGateway, stdioUpstream, type RunningGateway } from '../support/gateway.js';

const require = createRequire(import.meta.url);
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

const scratch = (what: string) => realpathSync(mkdtempSync(join(tmpdir(), `mcpgw-sbx-fs-${what}-`)));
const writable = scratch('rw');
const readOnly = scratch('ro');
const outside = scratch('out');
writeFileSync(join(readOnly, 'notes.txt'), 'read-only notes');

let gw: RunningGateway;
let client: Client;

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('fs', FILESYSTEM, {
          args: [FILESYSTEM, writable, readOnly],
          pool: { min: 1, max: 1 },
          sandbox: {
            network: 'none',
            // The server's code and its dependencies, and the directory it may read but not change.
            readOnly: [realpathSync(resolve(ROOT, 'node_modules')), readOnly],
            writable: [writable],
          },
        }),
      ],
    }),
  );
  ({ client } = await connectClient(gw.url));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await gw?.stop();
  for (const dir of [writable, readOnly, outside]) rmSync(dir, { recursive: true, force: true });
});

async function call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const r = (await client.callTool({ name: `fs__${name}`, arguments: args })) as {
    content: Array<{ text: string }>;
    isError?: boolean;
  };
  return { text: r.content.map((c) => c.text).join(''), isError: r.isError === true };
}

describe('server-filesystem in a sandbox', () => {
  it('lists its tools through the gateway', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'fs__read_text_file',
        'fs__write_file',
        'fs__list_directory',
        'fs__list_allowed_directories',
      ]),
    );
    const allowed = await call('list_allowed_directories', {});
    expect(allowed.text).toContain(writable);
    expect(allowed.text).toContain(readOnly);
  });

  it('writes a file in its writable directory that the host sees, and reads it back', async () => {
    const file = join(writable, 'from-the-sandbox.txt');
    const written = await call('write_file', { path: file, content: 'written in the box' });
    expect(written.isError).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('written in the box');
    expect(await call('read_text_file', { path: file })).toEqual({ text: 'written in the box', isError: false });
    expect(await call('read_text_file', { path: join(readOnly, 'notes.txt') })).toEqual({
      text: 'read-only notes',
      isError: false,
    });
  });

  it('a write outside its allowed directories is refused by the server; nothing reaches the host', async () => {
    const r = await call('write_file', { path: join(outside, 'escaped.txt'), content: 'no' });
    expect(r).toEqual({ text: expect.stringMatching(/outside allowed directories/), isError: true });
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a write to the read-only directory, which the server allows, is refused by the sandbox', async () => {
    const r = await call('write_file', { path: join(readOnly, 'changed.txt'), content: 'no' });
    expect(r).toEqual({ text: expect.stringMatching(/EROFS|read-only file system/), isError: true });
    expect(existsSync(join(readOnly, 'changed.txt'))).toBe(false);
    expect(readdirSync(readOnly)).toEqual(['notes.txt']);
  });
});
