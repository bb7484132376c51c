/**
 * A Streamable HTTP MCP server with sessions that takes only users' tokens issued by the test
 * authorization server (the gateway's own token, subject "gateway", is refused with 401), for
 * everything: initialize, tools/list (one tool, `whoami`) and tools/call (`you are <user> in
 * <session>`). For the tests of upstreams that list only per user.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveConfig } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { TEST_CLIENT, type AuthorizationServer } from './authorization-server.js';
import { httpUpstream } from './http-upstream.js';
import type { JwtIssuer } from './jwt-issuer.js';
import { oneToolResult, startJsonRpcServer } from './json-rpc-http.js';

export interface PerUserUpstreamEvents {
  /** A request it accepted: its method, the user its token acts for, its session. */
  accepted?: (request: { method: string; user: string; session: string | undefined }) => void;
  /** A request refused because it carried the gateway's own token. */
  refusedGateway?: () => void;
}

export function startPerUserUpstream(as: AuthorizationServer, events: PerUserUpstreamEvents = {}): Promise<Server> {
  let sessions = 0;
  return startJsonRpcServer((msg, req) => {
    const user = as.live.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (user === undefined || user === 'gateway') {
      if (user === 'gateway') events.refusedGateway?.();
      return { status: 401 };
    }
    const session = req.headers['mcp-session-id'] as string | undefined;
    events.accepted?.({ method: String(msg.method), user, session });
    const headers: Record<string, string> =
      msg.method === 'initialize' ? { 'mcp-session-id': `s${++sessions}-${user}` } : {};
    return { result: oneToolResult(msg, 'private', 'whoami', `you are ${user} in ${session}`), headers };
  });
}

/** An upstream's `oauth`: the caller's token exchanged at `as` for one meant for `audience`, as the test client. */
export function tokenExchange(as: AuthorizationServer, audience: string): Record<string, unknown> {
  return {
    grant: 'token-exchange',
    tokenUrl: as.tokenUrl,
    clientId: TEST_CLIENT.id,
    clientSecret: TEST_CLIENT.secret,
    audience,
  };
}

/** A gateway config with auth on (`issuer`'s tokens) and `private`, the per-user `upstream` in mode per-session, reached with `oauth`. */
export function perUserConfig(issuer: JwtIssuer, upstream: Server, oauth: Record<string, unknown>): GatewayConfig {
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
  return resolveConfig({
    listen: { host: '127.0.0.1', port: 0 },
    logLevel: 'silent',
    auth: issuer.authConfig,
    upstreams: [httpUpstream('private', url, { mode: 'per-session', oauth })],
  });
}
