/**
 * What a newcomer's script reads at start-up, at the default log level: nothing says "listening"
 * before the gateway's own "listening: MCP endpoint" line (the README tells scripts to wait for
 * it), so a script that waits for that word never sends MCP traffic to a gateway still starting.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, stdioUpstream } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';

let gw: GatewayProcess | undefined;

afterAll(async () => {
  await gw?.stop();
});

describe('start-up lines at logLevel info', () => {
  it(
    'the first line that says "listening" is the MCP endpoint line, and MCP is served then',
    { timeout: 60_000 },
    async () => {
      gw = await spawnGateway({ logLevel: 'info', upstreams: [stdioUpstream('echo', ECHO_SERVER)] });
      const lines = gw.output().split('\n');
      const first = lines.findIndex((l) => /listening/i.test(l));
      expect(lines[first]).toMatch(/^mcp-gateway \S+ listening: MCP endpoint http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      // Fastify's own line is still there, earlier, without the word.
      expect(lines.slice(0, first).some((l) => l.includes('port bound at http://127.0.0.1:'))).toBe(true);
      const res = await fetch(new URL('/readyz', gw.url));
      expect(res.status).toBe(200);
    },
  );
});
