/**
 * With auth on, /status and /status.json need a valid token whose principal is an admin
 * (status.principals) or that grants an admin scope (status.scopes); anything else is the
 * table's 401 or 403, with a JSON-RPC error body. With status.enabled false there is no page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, type RunningGateway } from '../support/gateway.js';
import { TEST_ISSUER, startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';

let issuer: JwtIssuer;
let gw: RunningGateway;

beforeAll(async () => {
  issuer = await startJwtIssuer();
  gw = await startGateway(
    exampleConfig({
      auth: issuer.authConfig,
      status: { principals: [`${TEST_ISSUER} operator`], scopes: ['mcpgw:admin'] },
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
  await issuer?.close();
});

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.base}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

describe('/status with auth on', () => {
  for (const path of ['/status', '/status.json']) {
    it(`${path}: no token is 401 UNAUTHORIZED with a challenge, and shows nothing`, async () => {
      const r = await get(path);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(JSON.parse(r.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32012 } });
      expect(r.text).not.toContain('echo');
    });

    it(`${path}: a bad token is 401`, async () => {
      const r = await get(path, { authorization: 'Bearer not.a.jwt' });
      expect(r.status).toBe(401);
      expect(JSON.parse(r.text).error.code).toBe(-32012);
    });

    it(`${path}: an ordinary client's token is 403 INSUFFICIENT_SCOPE`, async () => {
      const r = await get(path, await issuer.bearer('alice'));
      expect(r.status).toBe(403);
      expect(r.headers.get('www-authenticate')).toContain('scope="mcpgw:admin"');
      expect(JSON.parse(r.text)).toMatchObject({ error: { code: -32013, message: expect.stringContaining('admin') } });
      expect(r.text).not.toContain('echo__');
    });

    it(`${path}: the admin scope or the admin principal is let in`, async () => {
      const byScope = await get(path, await issuer.bearer('bob', { scope: 'mcp:tools mcpgw:admin' }));
      expect(byScope.status).toBe(200);
      expect(byScope.text).toContain('echo');
      const byPrincipal = await get(path, await issuer.bearer('operator'));
      expect(byPrincipal.status).toBe(200);
      expect(byPrincipal.text).toContain('slow');
    });
  }

  it("a subject that merely starts like the admin's is not the admin", async () => {
    // The admin is named with its issuer: the same subject elsewhere is someone else.
    const r = await get('/status.json', await issuer.bearer('operator2'));
    expect(r.status).toBe(403);
  });
});

describe('/status turned off', () => {
  let off: RunningGateway;
  beforeAll(async () => {
    off = await startGateway(exampleConfig({ status: { enabled: false } }));
  });
  afterAll(async () => {
    await off?.stop();
  });

  it('is not served', async () => {
    expect((await fetch(`${off.base}/status`)).status).toBe(404);
    expect((await fetch(`${off.base}/status.json`)).status).toBe(404);
    expect((await fetch(`${off.base}/healthz`)).status).toBe(200);
  });
});

describe('status config', () => {
  it('rejects bad keys and values', () => {
    expect(() => exampleConfig({ status: { refreshSeconds: -1 } })).toThrow(/status/);
    expect(() => exampleConfig({ status: { scopes: ['has space'] } })).toThrow(/status/);
    expect(() => exampleConfig({ status: { admins: [] } })).toThrow(/status/);
  });
});
