/**
 * A JWT issuer on loopback for tests: a real JWKS endpoint serving one RS256 key, and tokens
 * signed with it. `authConfig` is the gateway's `auth` section that trusts it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';

export const TEST_ISSUER = 'https://issuer.test.invalid';
export const TEST_RESOURCE = 'http://127.0.0.1/mcp';

export interface JwtIssuer {
  authConfig: Record<string, unknown>;
  /** `Authorization` header with a token for `sub` (5 minutes, scope mcp:tools). */
  bearer(sub: string, claims?: Record<string, unknown>): Promise<{ authorization: string }>;
  close(): Promise<void>;
}

export async function startJwtIssuer(): Promise<JwtIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const server: Server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const sign = (sub: string, claims: Record<string, unknown>, key: CryptoKey) =>
    new SignJWT({ scope: 'mcp:tools', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(TEST_ISSUER)
      .setAudience(TEST_RESOURCE)
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
  return {
    authConfig: {
      mode: 'jwt',
      resource: TEST_RESOURCE,
      issuer: TEST_ISSUER,
      jwksUrl: `http://127.0.0.1:${port}/jwks`,
      authorizationServers: [TEST_ISSUER],
    },
    bearer: async (sub, claims = {}) => ({ authorization: `Bearer ${await sign(sub, claims, privateKey)}` }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
