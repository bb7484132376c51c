/** The README's curl session and SDK snippet, run as written (only the URL points at a gateway on a free port). */
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
  // Fenced as bash: it uses arrays, which sh does not have.
  const block = /```bash\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README has no curl session');
  return block[1]!;
}

/** The first ```js block of the SDK section, which says it runs as plain `node agent.mjs`. */
function sdkSnippet(): string {
  const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## With the official SDK client'));
  const block = /```js\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 3)));
  if (!block) throw new Error('README has no SDK snippet fenced as js');
  return block[1]!;
}

describe('README SDK snippet', () => {
  it('is JavaScript that node runs as an ES module, listing the tools and calling one with progress', async () => {
    const url = 'http://127.0.0.1:8080/mcp';
    const snippet = sdkSnippet();
    expect(snippet).toContain(url);
    // From the repository root, so the SDK resolves from its node_modules as from the reader's.
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', snippet.replace(url, gw.url.href)], {
      cwd: ROOT,
      timeout: 20_000,
    });
    expect(stdout).toContain('echo__add');
    expect(stdout).toMatch(/progress 1\/5/);
    expect(stdout).toContain('slept 500ms');
  });
});

describe('README curl session', () => {
  it('runs against a live gateway and shows each step working', async () => {
    const script = curlSession().replace(/^MCP=.*$/m, `MCP=${gw.url.href}`);
    expect(script).toContain(`MCP=${gw.url.href}`);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { timeout: 20_000 });
    expect(stdout).toContain('"name":"echo__add"');
    // Each reply on a line of its own: steps 2 and 3 do not run together.
    expect(stdout).toMatch(/^\{"jsonrpc":"2\.0","id":2,/m);
    expect(stdout).toMatch(/^\{"jsonrpc":"2\.0","id":3,/m);
    expect(stdout).toContain('"text":"5"');
    expect(stdout).toMatch(
      /event: message\ndata: \{[^\n]*"notifications\/progress"[^\n]*"progressToken":"p1","progress":1/,
    );
    expect(stdout).toContain('"text":"slept 300ms"');
    expect(stdout.trim().endsWith('200')).toBe(true);
  });
});
