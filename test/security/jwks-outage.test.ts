/**
 * The issuer's key set cannot be fetched (nothing listens, or it answers 500): a well-formed
 * token gets 503 AUTHORIZATION_SERVER_UNAVAILABLE with Retry-After, not 401 (the token may be
 * fine; a client that drops its token on a 401 would be told a lie), while a malformed token is
 * still a 401. Real gateway, real JWKS servers on loopback.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, post, startGateway, type RunningGateway } from '../support/gateway.js';
import { TEST_ISSUER, TEST_RESOURCE, startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { freePort } from '../support/redis.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'jwks', version: '1' } },
};

let issuer: JwtIssuer;
let failing: Server;
const gateways: RunningGateway[] = [];

function gatewayWithKeysAt(jwksUrl: string): Promise<RunningGateway> {
  return startGateway(
    exampleConfig({
      auth: { mode: 'jwt', resource: TEST_RESOURCE, issuer: TEST_ISSUER, jwksUrl, authorizationServers: [TEST_ISSUER] },
    }),
  ).then((gw) => {
    gateways.push(gw);
    return gw;
  });
}

beforeAll(async () => {
  issuer = await startJwtIssuer();
  failing = createServer((_req, res) => res.writeHead(500).end('down'));
  await new Promise<void>((r) => failing.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  for (const gw of gateways) await gw.stop();
  await new Promise((r) => failing?.close(r));
  await issuer?.close();
});

describe('the issuer key set is unreachable', () => {
  it('nothing listens at jwksUrl: 503, retryable, with Retry-After; a malformed token is still 401', async () => {
    const gw = await gatewayWithKeysAt(`http://127.0.0.1:${await freePort()}/jwks`);
    const r = await post(gw.url, INITIALIZE, await issuer.bearer('alice'));
    expect(r.status, r.text).toBe(503);
    expect(r.json.error).toMatchObject({
      code: -32014,
      data: { type: 'AUTHORIZATION_SERVER_UNAVAILABLE', retryable: true },
    });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const malformed = await post(gw.url, INITIALIZE, { authorization: 'Bearer not.a.jwt' });
    expect(malformed.status).toBe(401);
    expect(malformed.json.error.data.type).toBe('UNAUTHORIZED');
  });

  it('jwksUrl answers 500: 503 as well', async () => {
    const gw = await gatewayWithKeysAt(`http://127.0.0.1:${(failing.address() as AddressInfo).port}/jwks`);
    const r = await post(gw.url, INITIALIZE, await issuer.bearer('alice'));
    expect(r.status, r.text).toBe(503);
    expect(r.json.error.data.type).toBe('AUTHORIZATION_SERVER_UNAVAILABLE');
  });

  it('with the keys reachable the same token is accepted', async () => {
    const gw = await gatewayWithKeysAt(issuer.authConfig.jwksUrl as string);
    const r = await post(gw.url, INITIALIZE, await issuer.bearer('alice'));
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBeTruthy();
  });
});
