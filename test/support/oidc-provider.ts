/**
 * A real OAuth 2.1 / OpenID Connect authorization server on loopback for identity tests:
 * panva's `oidc-provider` (certified, the one many deployments run), configured as an MCP
 * upstream's server would be, so the gateway's authorization code grant meets another
 * implementation than our own test/support/authorization-server.ts:
 *
 * - one confidential client (client_secret_basic) whose only redirect_uri is the gateway's
 *   /oauth/callback; PKCE S256 required for it too (oidc-provider requires it only for public
 *   clients by default);
 * - RFC 8707 resource indicators: the upstream's URL is the one resource, with the scopes it
 *   knows and opaque access tokens of `accessTokenTTL` seconds (settable between steps), which
 *   the upstream checks at RFC 7662 introspection with a client of its own;
 * - refresh tokens issued for every code (no offline_access needed) and rotated on each use;
 * - RFC 7009 revocation;
 * - the login and consent interaction finished at once by a route of our own, for the user the
 *   test's "browser" names in an `x-test-user` header (a user in `deny`: access_denied). No
 *   devInteractions pages.
 *
 * Browsers keep oidc-provider's interaction cookies between hops: `signIn` is that browser.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { confirm, type Consent } from './oauth-browser.js';
import { freePort } from './redis.js';

export const OIDC_CLIENT = { id: 'mcp-gateway', secret: 'gw/s3cret:1' };
/** The upstream's own client, for introspection only. */
export const OIDC_UPSTREAM_CLIENT = { id: 'crm-upstream', secret: 'crm-introspects' };
export const OIDC_SCOPES = ['crm:read', 'crm:write'];

/** One answered token request (grant.success / grant.error), secrets included: for assertions only. */
export interface TokenGrant {
  grantType: string;
  ok: boolean;
  /** The refresh token presented (grant_type refresh_token). */
  refreshTokenIn?: string;
  accessToken?: string;
  refreshToken?: string;
  expiresIn?: number;
  /** The account the token acts for. */
  sub?: string;
  resource?: string;
  scope?: string;
  error?: string;
  /** When it was answered (Date.now()). */
  at: number;
}

export interface OidcProvider {
  issuer: string;
  provider: Provider;
  /** Access token lifetime (seconds) of tokens issued from now on. */
  accessTokenTTL: number;
  /** Users whose consent is refused (access_denied). */
  deny: Set<string>;
  grants: TokenGrant[];
  /** Tokens that reached the revocation endpoint, in order (hint, token). */
  revocations: Array<{ token: string; hint: string | undefined }>;
  /** Interactions finished, per user. */
  logins: Map<string, number>;
  /** RFC 7662: what the provider says of `token` now (as the upstream's client asks). */
  introspect(token: string): Promise<{
    active: boolean;
    sub?: string;
    aud?: string | string[];
    scope?: string;
    exp?: number;
    client_id?: string;
  }>;
  close(): Promise<void>;
}

/**
 * Starts oidc-provider for the gateway's client redirecting to `redirectUri` (an array: every
 * callback a test's replicas are reached at) and one resource, `resource` (the upstream's URL).
 */
export async function startOidcProvider(options: { redirectUris: string[]; resource: string }): Promise<OidcProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const state = {
    accessTokenTTL: 3600,
    deny: new Set<string>(),
    grants: [] as TokenGrant[],
    revocations: [] as OidcProvider['revocations'],
    logins: new Map<string, number>(),
  };
  // A signing key of its own (it signs no access token here; ID tokens and the like need one).
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'op-1', use: 'sig', alg: 'RS256' }] },
    clients: [
      {
        client_id: OIDC_CLIENT.id,
        client_secret: OIDC_CLIENT.secret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: OIDC_UPSTREAM_CLIENT.id,
        client_secret: OIDC_UPSTREAM_CLIENT.secret,
        redirect_uris: [],
        grant_types: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    // Fixed keys: the test never needs them rotated, and oidc-provider warns without them.
    cookies: { keys: ['oidc-test-cookie-key-1'] },
    pkce: { required: () => true },
    // Lifetimes said outright (oidc-provider notices each default it falls back to). Access tokens: the resource server's, below.
    ttl: {
      AccessToken: () => state.accessTokenTTL,
      AuthorizationCode: 60,
      Grant: 3600,
      Interaction: 600,
      RefreshToken: 86_400,
      Session: 3600,
    },
    features: {
      devInteractions: { enabled: false },
      // Only the upstream's own client reads what a token is; each client revokes only its own tokens.
      introspection: { enabled: true, allowedPolicy: (_ctx, client) => client.clientId === OIDC_UPSTREAM_CLIENT.id },
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource,
        // A token for the one resource there is: its audience, its scopes, opaque (introspected).
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== options.resource) throw new errors.InvalidTarget();
          return {
            scope: OIDC_SCOPES.join(' '),
            audience: options.resource,
            accessTokenTTL: state.accessTokenTTL,
            accessTokenFormat: 'opaque',
          };
        },
        // A refresh without `resource` still gets a token for the granted one.
        useGrantedResource: () => true,
      },
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    // Errors as JSON, not the HTML page: a test reads them.
    renderError: (ctx, out) => {
      ctx.type = 'application/json';
      ctx.body = out;
    },
  });
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    const body = ctx.body as Record<string, unknown>;
    const at = ctx.oidc.entities.AccessToken;
    state.grants.push({
      grantType: String(ctx.oidc.params?.grant_type),
      ok: true,
      at: Date.now(),
      ...(ctx.oidc.params?.refresh_token ? { refreshTokenIn: String(ctx.oidc.params.refresh_token) } : {}),
      accessToken: String(body.access_token),
      ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
      expiresIn: Number(body.expires_in),
      ...(at?.accountId ? { sub: at.accountId } : {}),
      ...(typeof at?.aud === 'string' ? { resource: at.aud } : {}),
      scope: String(body.scope ?? ''),
    });
  });
  provider.on('grant.error', (ctx: KoaContextWithOIDC, err: Error & { error?: string }) => {
    state.grants.push({
      grantType: String(ctx.oidc.params?.grant_type),
      ok: false,
      at: Date.now(),
      ...(ctx.oidc.params?.refresh_token ? { refreshTokenIn: String(ctx.oidc.params.refresh_token) } : {}),
      error: err.error ?? err.message,
    });
  });
  // Quiet: expected refusals (a replayed refresh token, a bad state) are not the test's failures.
  provider.on('server_error', (_ctx: unknown, err: Error) => console.error('oidc-provider server_error', err));

  // oidc-provider's documented post-middleware: what reached its revocation endpoint.
  provider.use(async (ctx, next) => {
    await next();
    const oidc = (ctx as KoaContextWithOIDC).oidc;
    if (oidc?.route === 'revocation')
      state.revocations.push({
        token: String(oidc.params?.token ?? ''),
        hint: oidc.params?.token_type_hint === undefined ? undefined : String(oidc.params.token_type_hint),
      });
  });
  const callback = provider.callback();
  // Login and consent in one: the browser's x-test-user signs in and grants what was asked.
  const interaction = async (req: IncomingMessage, res: ServerResponse) => {
    const details = await provider.interactionDetails(req, res);
    const user = String(req.headers['x-test-user'] ?? '');
    if (user === '' || state.deny.has(user)) {
      return provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the user said no <b>' },
        { mergeWithLastSubmission: false },
      );
    }
    const params = details.params as Record<string, string | undefined>;
    const grant = new provider.Grant({ accountId: user, clientId: String(params.client_id) });
    const scopes = String(params.scope ?? '')
      .split(' ')
      .filter((s) => OIDC_SCOPES.includes(s));
    grant.addResourceScope(options.resource, scopes.join(' '));
    const grantId = await grant.save();
    state.logins.set(user, (state.logins.get(user) ?? 0) + 1);
    return provider.interactionFinished(
      req,
      res,
      { login: { accountId: user }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    if (req.method === 'GET' && path.startsWith('/interaction/')) {
      return void interaction(req, res).catch((err: unknown) => void res.writeHead(500).end(String(err)));
    }
    callback(req, res);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const basic = (c: { id: string; secret: string }) =>
    `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret)}`).toString('base64')}`;
  return Object.assign(state, {
    issuer,
    provider,
    introspect: async (token: string) => {
      const res = await fetch(`${issuer}/token/introspection`, {
        method: 'POST',
        headers: { authorization: basic(OIDC_UPSTREAM_CLIENT), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
      });
      return (await res.json()) as Awaited<ReturnType<OidcProvider['introspect']>>;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  });
}

/**
 * The user's browser at oidc-provider: from its /auth (the URL the gateway's confirmation sent
 * it to) through the interaction (as `user`, in x-test-user) and back, keeping the provider's
 * cookies between hops, until it is sent somewhere else (the gateway's callback): that URL.
 */
export async function signIn(authorize: URL, user: string): Promise<URL> {
  const jar = new Map<string, string>();
  let at = authorize;
  for (let hop = 0; hop < 10; hop++) {
    if (at.origin !== authorize.origin) return at;
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(at, {
      redirect: 'manual',
      headers: { 'x-test-user': user, ...(cookie ? { cookie } : {}) },
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location)
      throw new Error(`oidc-provider answered ${res.status} at ${at.pathname}: ${(await res.text()).slice(0, 300)}`);
    at = new URL(location, at);
  }
  throw new Error('oidc-provider kept redirecting');
}

/** A call the introspecting upstream took: the method, the bearer token, the user it acts for. */
export interface UpstreamCall {
  method: string;
  token: string;
  sub: string | undefined;
}

/**
 * A session-less MCP server with one tool, whoami, as an upstream behind oidc-provider would be:
 * initialize and lists for anyone (discovery anonymous), tools/call only with a bearer token
 * that `introspect` (oidc-provider's RFC 7662 endpoint, as the upstream's own client) says is
 * active, for `resource` and issued to the gateway's client; 401 otherwise. Each call is
 * recorded with the token's sub.
 */
export function startIntrospectingUpstream(
  port: number,
  resource: string,
  introspect: (token: string) => ReturnType<OidcProvider['introspect']>,
  calls: UpstreamCall[],
): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', async () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(body);
      if (msg.id === undefined) return void res.writeHead(202).end();
      let result: unknown;
      if (msg.method === 'initialize')
        result = {
          protocolVersion: msg.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'crm', version: '1' },
        };
      else if (msg.method === 'tools/list') result = { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] };
      else if (msg.method === 'tools/call') {
        const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        const said = token === '' ? { active: false } : await introspect(token);
        const valid =
          said.active && said.client_id === OIDC_CLIENT.id && ([] as unknown[]).concat(said.aud).includes(resource);
        calls.push({ method: msg.method, token, sub: valid ? said.sub : undefined });
        if (!valid) return void res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
        result = { content: [{ type: 'text', text: `you are ${said.sub}` }] };
      } else result = {};
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  return new Promise((r) => server.listen(port, '127.0.0.1', () => r(server)));
}

/** Follows a gateway /oauth/start link as `user`'s browser: the confirmation, oidc-provider's sign-in, the gateway's callback page. */
export async function consentAtProvider(link: string, user: string): Promise<Consent> {
  const { authorize, cookie } = await confirm(link);
  const callback = await signIn(authorize, user);
  const res = await fetch(callback, { redirect: 'manual', headers: { cookie } });
  return { authorize, callback, status: res.status, page: await res.text(), headers: res.headers, cookie };
}
