/**
 * A reload that adds an upstream with grant authorization-code (issue 19): the /oauth/* routes
 * are always there (a typed 404 for an upstream nobody configured), and the token store exists
 * from start whenever auth is on and it can seal (memory, or Redis with secrets.keys), so the
 * new upstream's link, confirmation and callback work at once. With Redis and no secrets.keys
 * at start there is no store: the reload is rejected, naming the upstream and the restart.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Gateway } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { toolText } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/authorization-server.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { authCodeOAuth, consent, startUserUpstream, upstreamUrl, type Seen } from '../support/oauth-browser.js';
import { freePort, startRedis, type RedisServer } from '../support/redis.js';
import { configFile } from '../support/reload.js';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let upstream: Server;
let redis: RedisServer;
const seen: Seen[] = [];

const crm = (port: number) =>
  httpUpstream('crm', upstreamUrl(upstream), {
    discovery: 'anonymous',
    oauth: authCodeOAuth(as, port),
  });
// An upstream that needs nobody's token: the gateway starts with it alone.
const plain = () => httpUpstream('plain', upstreamUrl(upstream), { prefix: 'plain' });

async function started(
  config: Record<string, unknown>,
  port: number,
): Promise<{ gateway: Gateway; base: string; file: ReturnType<typeof configFile> }> {
  const file = configFile({ logLevel: 'silent', ...config, listen: { host: '127.0.0.1', port } });
  const gateway = await buildApp(loadConfig(file.file, {}), {
    configFile: file.file,
    logger: createLogger('silent'),
    defaultMetrics: false,
  });
  const base = await gateway.app.listen({ host: '127.0.0.1', port });
  return { gateway, base, file };
}

beforeAll(async () => {
  [as, issuer, redis] = await Promise.all([startAuthorizationServer(), startJwtIssuer(), startRedis()]);
  upstream = await startUserUpstream(as, seen);
});
afterAll(async () => {
  await Promise.all([as?.close(), issuer?.close(), redis?.stop(), new Promise((r) => upstream?.close(r))]);
});

describe('a reload that adds an authorization-code upstream', () => {
  it('is served at once: the call gets its link, the page and the callback work, the retried call goes as the user', async () => {
    const port = await freePort();
    const { gateway, base, file } = await started({ auth: issuer.authConfig, upstreams: [plain()] }, port);
    try {
      const { authorization } = await issuer.bearer('rita');
      // Before the reload: the routes answer, typed.
      const unknown = await fetch(`${base}/oauth/tokens/crm`, { method: 'DELETE', headers: { authorization } });
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as any).error.data.type).toBe('OAUTH_UPSTREAM_UNKNOWN');
      expect((await fetch(`${base}/oauth/start?state=nope`)).status).toBe(400);

      file.write({
        logLevel: 'silent',
        auth: issuer.authConfig,
        listen: { host: '127.0.0.1', port },
        upstreams: [plain(), crm(port)],
      });
      const result = await gateway.reload('api');
      expect(result).toMatchObject({ outcome: 'ok', diff: { added: [expect.objectContaining({ name: 'crm' })] } });

      const client = new Client({ name: 'rita', version: '1' }, { capabilities: { elicitation: { url: {} } } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { authorization } } }),
      );
      const err = await client.callTool({ name: 'crm__whoami', arguments: {} }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UrlElicitationRequiredError);
      expect((await consent((err as UrlElicitationRequiredError).elicitations[0]!.url, 'rita')).status).toBe(200);
      expect(toolText(await client.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are rita');
      expect((await fetch(`${base}/oauth/tokens/crm`, { method: 'DELETE', headers: { authorization } })).status).toBe(
        200,
      );
      await client.close();
    } finally {
      await gateway.close();
      file.remove();
    }
  });

  it('with Redis and no secrets.keys at start (no token store): rejected, naming the upstream and the restart; the gateway goes on', async () => {
    const port = await freePort();
    const sessions = { store: 'redis', redisUrl: redis.url, keyPrefix: `reload-${port}:` };
    const { gateway, base, file } = await started({ auth: issuer.authConfig, sessions, upstreams: [plain()] }, port);
    try {
      const keys = [{ id: 'k1', key: Buffer.alloc(32, 7).toString('base64') }];
      file.write({
        logLevel: 'silent',
        auth: issuer.authConfig,
        sessions,
        secrets: { keys },
        listen: { host: '127.0.0.1', port },
        upstreams: [plain(), crm(port)],
      });
      const result = await gateway.reload('api');
      expect(result.outcome).toBe('rejected');
      expect(result.error).toMatch(/upstreams\.crm\.oauth\.grant: .*no token store was made at start.*needs a restart/);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      expect(
        (await fetch(`${base}/oauth/tokens/crm`, { method: 'DELETE', headers: await issuer.bearer('rita') })).status,
      ).toBe(404);
    } finally {
      await gateway.close();
      file.remove();
    }
  });
});
