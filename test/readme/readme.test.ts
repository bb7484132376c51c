/** The README's curl session, run as written (only the URL points at a gateway on a free port). */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startGateway, type RunningGateway } from '../support/gateway.js';

const run = promisify(execFile);
let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

function curlSession(): string {
  const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Try it with curl'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README has no curl session');
  return block[1]!;
}

describe('README curl session', () => {
  it('runs against a live gateway and shows each step working', async () => {
    const script = curlSession().replace(/^MCP=.*$/m, `MCP=${gw.url.href}`);
    expect(script).toContain(`MCP=${gw.url.href}`);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { timeout: 20_000 });
    expect(stdout).toContain('"name":"echo__add"');
    expect(stdout).toContain('"text":"5"');
    expect(stdout).toMatch(/event: message\ndata: \{[^\n]*"notifications\/progress"[^\n]*"progressToken":"p1","progress":1/);
    expect(stdout).toContain('"text":"slept 300ms"');
    expect(stdout.trim().endsWith('200')).toBe(true);
  });
});
