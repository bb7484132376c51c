/**
 * The user's side of grant authorization-code in tests: a "browser" that follows the link a
 * call was answered with (gateway /oauth/start's page, its form posted with the page's cookie →
 * the authorization server's /authorize, where
 * the test server auto-approves for the user named in x-test-user → the gateway's
 * /oauth/callback), one hop at a time so each can be checked. And a gateway on a port chosen
 * before it starts (its redirectUri must name it), and an MCP upstream that takes only tokens
 * the authorization server holds live.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../src/app.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';
import { resolveConfig } from '../../src/config/load.js';
import { TEST_CLIENT, startAuthorizationServer, type AuthorizationServer } from './authorization-server.js';
import type { RunningGateway } from './gateway.js';
import { httpUpstream } from './http-upstream.js';
import { startJwtIssuer, type JwtIssuer } from './jwt-issuer.js';
import { oneToolResult, startJsonRpcServer } from './json-rpc-http.js';
import { freePort } from './redis.js';
import { roundRobinFetch } from './replicas.js';

export interface Consent {
  /** Where the confirmation sent the browser (the authorization server's /authorize, with PKCE). */
  authorize: URL;
  /** Where the authorization server sent it back (the gateway's /oauth/callback, with code and state). */
  callback: URL;
  status: number;
  page: string;
  headers: Headers;
  /** The consent cookie this browser holds (name=value). */
  cookie: string;
}

export interface Confirmed {
  /** The link's page (the confirmation form). */
  page: string;
  pageHeaders: Headers;
  cookie: string;
  /** The form's hidden fields. */
  form: { state: string; csrf: string };
  /** Where POST /oauth/start sent the browser. */
  authorize: URL;
}

/** Opens the link's page as a browser does: its cookie and its form's fields. */
export async function openLink(
  link: string,
): Promise<{ status: number; page: string; headers: Headers; cookie: string; form: { state: string; csrf: string } }> {
  const res = await fetch(link, { redirect: 'manual' });
  const page = await res.text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1] ?? '';
  return {
    status: res.status,
    page,
    headers: res.headers,
    cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!,
    form: { state: field('state'), csrf: field('csrf') },
  };
}

/** Posts a confirmation form to /oauth/start (`cookie`: what the browser sends, maybe none). */
export function postConfirm(link: string, form: Record<string, string>, cookie?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (cookie) headers.cookie = cookie;
  return fetch(new URL('/oauth/start', link), {
    method: 'POST',
    redirect: 'manual',
    headers,
    body: new URLSearchParams(form).toString(),
  });
}

/** Opens the link and presses its button: the browser is then on its way to the authorization server. */
export async function confirm(link: string): Promise<Confirmed> {
  const opened = await openLink(link);
  if (opened.status !== 200) throw new Error(`/oauth/start answered ${opened.status}: ${opened.page}`);
  const res = await postConfirm(link, opened.form, opened.cookie);
  if (res.status !== 303) throw new Error(`POST /oauth/start answered ${res.status}: ${await res.text()}`);
  return {
    page: opened.page,
    pageHeaders: opened.headers,
    cookie: opened.cookie,
    form: opened.form,
    authorize: new URL(res.headers.get('location')!),
  };
}

/** Follows a /oauth/start link as `user`'s browser (confirming its page), to the callback's page. */
export async function consent(link: string, user: string): Promise<Consent> {
  const { authorize, cookie } = await confirm(link);
  const approved = await fetch(authorize, { redirect: 'manual', headers: { 'x-test-user': user } });
  if (approved.status !== 302) throw new Error(`/authorize answered ${approved.status}`);
  const callback = new URL(approved.headers.get('location')!);
  const res = await fetch(callback, { redirect: 'manual', headers: { cookie } });
  return { authorize, callback, status: res.status, page: await res.text(), headers: res.headers, cookie };
}

/** A gateway listening on `port` (so its config can name its own callback before it starts). */
export async function startGatewayOn(config: GatewayConfig, port: number): Promise<RunningGateway> {
  const gateway = await buildApp(config, { logger: createLogger(config.logLevel), defaultMetrics: false });
  const address = await gateway.app.listen({ host: '127.0.0.1', port });
  return { gateway, url: new URL(config.path, address), base: address, stop: () => gateway.close() };
}

export interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
}

/**
 * A session-less MCP server with one tool, whoami: initialize and lists for anyone (discovery
 * anonymous), tools/call only with a bearer token `as` holds live (401 otherwise).
 */
export function startUserUpstream(as: AuthorizationServer, seen: Seen[]): Promise<Server> {
  return startJsonRpcServer((msg, req) => {
    seen.push({ method: String(msg.method), headers: req.headers });
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (msg.method === 'tools/call' && !as.live.has(bearer))
      return { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } };
    return { result: oneToolResult(msg, 'crm', 'whoami', `you are ${as.live.get(bearer)}`) };
  });
}

export const upstreamUrl = (server: Server, path = '/mcp') =>
  `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;

/**
 * An SDK v1 client that declares URL-mode elicitation (so a call that needs the user's link is
 * answered with -32042), connected as `sub` with a bearer token from `issuer`: to one gateway, or
 * alternating over `replicas` request by request (each request's replica index pushed to `hits`).
 */
export async function connectAsUser(
  issuer: JwtIssuer,
  sub: string,
  to: RunningGateway | { replicas: readonly RunningGateway[]; hits: number[] },
): Promise<Client> {
  const { authorization } = await issuer.bearer(sub);
  const client = new Client({ name: sub, version: '1' }, { capabilities: { elicitation: { url: {} } } });
  const requestInit = { headers: { authorization } };
  const transport =
    'replicas' in to
      ? new StreamableHTTPClientTransport(to.replicas[0]!.url, {
          fetch: roundRobinFetch(to.replicas, to.hits),
          requestInit,
        })
      : new StreamableHTTPClientTransport(to.url, { requestInit });
  await client.connect(transport);
  return client;
}

/** An upstream's `oauth` for grant authorization-code at `as` (the test client), calling back to the gateway on `callbackPort`. */
export function authCodeOAuth(as: AuthorizationServer, callbackPort: number): Record<string, unknown> {
  return {
    grant: 'authorization-code',
    tokenUrl: as.tokenUrl,
    issuer: as.issuer,
    clientId: TEST_CLIENT.id,
    clientSecret: TEST_CLIENT.secret,
    redirectUri: `http://127.0.0.1:${callbackPort}/oauth/callback`,
  };
}

/**
 * What the authorization-code tests run beside their gateway: the authorization server, the JWT
 * issuer of the clients' tokens, the port the gateway is to listen on (its callback URL names it
 * before it starts), and the user upstream (startUserUpstream) recording into `seen`.
 */
export interface LinkRig {
  as: AuthorizationServer;
  issuer: JwtIssuer;
  port: number;
  upstream: Server;
  close(): Promise<void>;
}

export async function startLinkRig(seen: Seen[]): Promise<LinkRig> {
  const [as, issuer, port] = await Promise.all([startAuthorizationServer(), startJwtIssuer(), freePort()]);
  const upstream = await startUserUpstream(as, seen);
  const close = async () =>
    void (await Promise.all([as.close(), issuer.close(), new Promise((r) => upstream.close(r))]));
  return { as, issuer, port, upstream, close };
}

/** A gateway config with auth on and `crm`, the rig's user upstream linked by authorization code; `overrides` at the top level. */
export function linkedConfig(rig: LinkRig, overrides: Record<string, unknown> = {}): GatewayConfig {
  const crm = httpUpstream('crm', upstreamUrl(rig.upstream), {
    discovery: 'anonymous',
    oauth: authCodeOAuth(rig.as, rig.port),
  });
  return resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: 'silent',
      auth: rig.issuer.authConfig,
      upstreams: [crm],
      ...overrides,
    },
    {},
  );
}

/** The link a user opens to link `crm`: its URL elicitation's, which the client's first call of crm__whoami is refused with. */
export async function linkOf(client: Client): Promise<string> {
  const err = await client.callTool({ name: 'crm__whoami', arguments: {} }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof UrlElicitationRequiredError)) throw new Error(`expected a URL elicitation, got ${String(err)}`);
  return err.elicitations[0]!.url;
}
