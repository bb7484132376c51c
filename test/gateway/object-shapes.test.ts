import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, stdioUpstream } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';

// On SIGUSR2 the gateway process says whether two `{}` literals given the same keys, the
// first one never used before, still share one hidden class (V8's %HaveSameMap).
const PROBE = `process.on('SIGUSR2', () => {
  const make = () => { const o = {}; o.first_key_nobody_used_before = 1; o.second = 2; return o; };
  process.stderr.write('SAME_MAP ' + %HaveSameMap(make(), make()) + '\\n');
});
`;

describe('object shapes in a running gateway', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-shapes-'));
  let gateway: GatewayProcess | undefined;
  afterAll(async () => {
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps V8's empty-object map able to take new keys: plain objects on the hot path share their maps", async () => {
    const probe = join(dir, 'probe.mjs');
    writeFileSync(probe, PROBE);
    // Started as the data path runs: config schema, params schemas and a tool's argument schema compiled.
    gateway = await spawnGateway(
      { listen: { host: '127.0.0.1', port: 0 }, logLevel: 'warn', upstreams: [stdioUpstream('echo', ECHO_SERVER)] },
      { nodeArgs: ['--allow-natives-syntax', '--import', probe] },
    );
    const line = new Promise<string>((resolve) => {
      let err = '';
      gateway!.child.stderr!.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /SAME_MAP (\w+)/.exec(err);
        if (m) resolve(m[1]!);
      });
    });
    gateway.child.kill('SIGUSR2');
    // false when something (ajv's code optimiser did) filled the map's 1536 transitions with one-off keys.
    expect(await line).toBe('true');
  });
});
