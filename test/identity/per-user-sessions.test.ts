/**
 * An upstream that lists only per user (issue 19, discovery's second kind): `mode: per-session`
 * with a per-user grant opens each session's worker with its user's token, initialize and lists
 * included. The gateway's own discovery is refused there, so the shared catalog comes from the
 * first user's worker: a session's tools/list opens it. Every request the upstream accepted
 * carried a user's token; none carried the gateway's.
 */
import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { perUserConfig, startPerUserUpstream, tokenExchange } from '../support/per-user-upstream.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/authorization-server.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let upstream: Server;
let gw: RunningGateway;
/** What the upstream accepted: method, the user its token acts for, its session. */
const accepted: Array<{ method: string; user: string; session: string | undefined }> = [];
let refusedGateway = 0;

beforeAll(async () => {
  [as, issuer] = await Promise.all([startAuthorizationServer(), startJwtIssuer()]);
  upstream = await startPerUserUpstream(as, {
    accepted: (a) => void accepted.push(a),
    refusedGateway: () => void refusedGateway++,
  });
  const config = perUserConfig(issuer, upstream, tokenExchange(as, 'urn:private'));
  gw = await startGateway(config);
});
afterAll(async () => {
  await gw?.stop();
  await Promise.all([as?.close(), issuer?.close(), new Promise((r) => upstream?.close(r))]);
});

async function connect(sub: string): Promise<Client> {
  const { authorization } = await issuer.bearer(sub);
  const client = new Client({ name: sub, version: '1' });
  await client.connect(new StreamableHTTPClientTransport(gw.url, { requestInit: { headers: { authorization } } }));
  return client;
}

describe("per-session workers opened with their user's token", () => {
  it("the gateway's own discovery is refused; the first user's tools/list opens their worker and the catalog comes from it", async () => {
    expect(refusedGateway).toBeGreaterThan(0);
    const alice = await connect('alice');
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name)).toEqual(['private__whoami']);
    expect(toolText(await alice.callTool({ name: 'private__whoami', arguments: {} }))).toMatch(
      /^you are alice in s\d+-alice$/,
    );
    await alice.close();
  });

  it("each session's worker initializes, lists and calls as its own user, in its own upstream session", async () => {
    const [bob, carol] = await Promise.all([connect('bob'), connect('carol')]);
    expect((await bob.listTools()).tools.map((t) => t.name)).toEqual(['private__whoami']);
    const [b, c] = await Promise.all([
      bob.callTool({ name: 'private__whoami', arguments: {} }),
      carol.callTool({ name: 'private__whoami', arguments: {} }),
    ]);
    expect(toolText(b)).toMatch(/^you are bob in s\d+-bob$/);
    expect(toolText(c)).toMatch(/^you are carol in s\d+-carol$/);
    for (const user of ['bob', 'carol']) {
      const mine = accepted.filter((a) => a.user === user);
      expect(mine.filter((a) => a.method === 'initialize')).toHaveLength(1);
      // Everything after initialize went in the user's own upstream session.
      for (const a of mine.filter((m) => m.method !== 'initialize')) expect(a.session).toMatch(new RegExp(`-${user}$`));
    }
    expect(accepted.every((a) => a.user !== 'gateway')).toBe(true);
    // The gateway's refused discovery and health checks are no outage.
    await new Promise((r) => setTimeout(r, 600));
    const ready = (await (await fetch(`${gw.base}/readyz`)).json()) as any;
    expect(ready.upstreams.private).toMatchObject({ circuit: 'closed', consecutiveFailures: 0 });
    await Promise.all([bob.close(), carol.close()]);
  });
});
