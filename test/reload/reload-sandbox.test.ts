/**
 * A reload that adds a sandboxed stdio upstream: applied where bwrap runs (and the new upstream
 * serves, sandboxed), refused naming it where bwrap is missing, as a start-up would be.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectClient } from '../support/everything.js';
import { ECHO_SERVER, ROOT, stdioUpstream } from '../support/gateway.js';
import { startFromFile } from '../support/reload.js';

const FIXTURES = resolve(ROOT, 'test/fixtures');
const FIXTURE = join(FIXTURES, 'sandbox-server.mjs');
const empty = mkdtempSync(join(tmpdir(), 'mcpgw-reload-sbx-'));
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
  rmSync(empty, { recursive: true, force: true });
});

const echo = stdioUpstream('echo', ECHO_SERVER);
const boxed = (name: string) => stdioUpstream(name, FIXTURE, { sandbox: { readOnly: [FIXTURES] } });

describe('reload adding a sandboxed upstream', () => {
  it('is refused naming it when bwrap is not on the PATH; the running config stays', async () => {
    const gw = await startFromFile({ upstreams: [echo] }, cleanups);
    gw.file.write({ logLevel: 'silent', upstreams: [echo, boxed('boxed')] });
    const path = process.env.PATH;
    process.env.PATH = empty;
    let result;
    try {
      result = await gw.gateway.reload();
    } finally {
      process.env.PATH = path;
    }
    expect(result.outcome).toBe('rejected');
    expect(result.error).toBe(
      `upstreams[1] (boxed): sandbox: bwrap (bubblewrap) is not found on PATH (${empty}); install the bubblewrap package`,
    );
    const { client } = await connectClient(gw.url);
    expect((await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('boxed__'))).toEqual([]);
    await client.close();
  });

  it('is applied where bwrap runs, and the new upstream answers from its sandbox', async () => {
    const gw = await startFromFile({ upstreams: [echo] }, cleanups);
    gw.file.write({ logLevel: 'silent', upstreams: [echo, boxed('boxed')] });
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    const { client } = await connectClient(gw.url);
    const r = (await client.callTool({ name: 'boxed__get_env', arguments: { name: 'HOME' } })) as {
      content: Array<{ text: string }>;
    };
    expect(r.content[0]!.text).toBe('/tmp');
    await client.close();
  });
});
