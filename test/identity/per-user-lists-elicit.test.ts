/**
 * An upstream that lists only per user (per-session workers, grant authorization-code) and a
 * user who has granted nothing yet (issue 19): their worker cannot open, so their list cannot
 * show the upstream. A 2025-11-25 client that takes URL elicitations gets the list answered with
 * -32042 and the link (the spec's URLElicitationRequiredError: the request cannot be processed
 * until the elicitation completes); after consent the list and the call go through their own
 * worker. A client without elicitation.url lists without the upstream. Once another user's worker
 * put the upstream in the catalog, the shared lists stand in and the call itself gets -32042.
 */
import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolText, type RunningGateway } from '../support/gateway.js';
import { perUserConfig, startPerUserUpstream } from '../support/per-user-upstream.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/authorization-server.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { authCodeOAuth, consent, startGatewayOn } from '../support/oauth-browser.js';
import { freePort } from '../support/redis.js';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let upstream: Server;
let gw: RunningGateway;
let port: number;

beforeAll(async () => {
  [as, issuer, port] = await Promise.all([startAuthorizationServer(), startJwtIssuer(), freePort()]);
  upstream = await startPerUserUpstream(as);
  const config = perUserConfig(issuer, upstream, authCodeOAuth(as, port));
  gw = await startGatewayOn(config, port);
});
afterAll(async () => {
  await gw?.stop();
  await Promise.all([as?.close(), issuer?.close(), new Promise((r) => upstream?.close(r))]);
});

async function connect(sub: string, url = true): Promise<Client> {
  const { authorization } = await issuer.bearer(sub);
  const client = new Client({ name: sub, version: '1' }, { capabilities: url ? { elicitation: { url: {} } } : {} });
  await client.connect(new StreamableHTTPClientTransport(gw.url, { requestInit: { headers: { authorization } } }));
  return client;
}

const elicited = async (p: Promise<unknown>): Promise<string> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UrlElicitationRequiredError);
  expect((err as UrlElicitationRequiredError).code).toBe(-32042);
  const [e] = (err as UrlElicitationRequiredError).elicitations;
  expect(e).toMatchObject({
    mode: 'url',
    url: expect.stringContaining(`127.0.0.1:${port}/oauth/start?state=`),
    elicitationId: expect.any(String),
  });
  return e!.url;
};

describe('a user without a token, an upstream that lists only per user', () => {
  it('a client without elicitation.url lists without the upstream (no -32042 it cannot take, no worker error)', async () => {
    const carol = await connect('carol', false);
    expect((await carol.listTools()).tools).toEqual([]);
    await carol.close();
  });

  it("a 2025-11-25 client with elicitation.url: the list answers -32042 with the link; after consent it lists and calls through the user's own worker", async () => {
    const alice = await connect('alice');
    const link = await elicited(alice.listTools());
    expect((await consent(link, 'alice')).status).toBe(200);
    expect((await alice.listTools()).tools.map((t) => t.name)).toEqual(['private__whoami']);
    expect(toolText(await alice.callTool({ name: 'private__whoami', arguments: {} }))).toMatch(
      /^you are alice in s\d+-alice$/,
    );
    await alice.close();
  });

  it("once the catalog lists it (another user's worker), the user sees the shared lists and their call gets -32042; after consent it goes as them", async () => {
    const bob = await connect('bob');
    expect((await bob.listTools()).tools.map((t) => t.name)).toEqual(['private__whoami']);
    const link = await elicited(bob.callTool({ name: 'private__whoami', arguments: {} }));
    expect((await consent(link, 'bob')).status).toBe(200);
    expect(toolText(await bob.callTool({ name: 'private__whoami', arguments: {} }))).toMatch(
      /^you are bob in s\d+-bob$/,
    );
    await bob.close();
  });
});
