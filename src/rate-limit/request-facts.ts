/**
 * What a rule of `rateLimits` or `quotas` sees of a request message (its facts), and the match of
 * a rule's globs against them: one copy, which the rate limiter and the quotas both use.
 *
 * Who a request is: its principal (auth on: the API key's or token's), else its client address
 * (the TCP peer, behind a proxy the proxy's: as limits.maxBodyBytesPerSecondPerClient keys
 * clients), else its scope (a 2025 session off HTTP). `principals` globs match that same name.
 */
import { compileGlob, type GlobMatcher } from '../config/rate-limits.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { JsonRpcRequest } from '../jsonrpc/messages.js';

/** What a rule may ask of the catalog: which upstream serves a name (the gateway's Catalog is one). */
export interface RoutesOf {
  tool(name: string): { upstream: string } | undefined;
  prompt(name: string): { upstream: string } | undefined;
  resource(uri: string): { upstream: string } | undefined;
}

/**
 * A check a request message passes before its handler (the rate limits, the quotas): returns
 * (or resolves) when it may go on, throws (or rejects) the refusal.
 */
export interface Admission {
  /** No rule: the chain leaves it out (not even asked). */
  readonly empty: boolean;
  admit(ctx: RequestContext, request: JsonRpcRequest, routes: RoutesOf): void | Promise<void>;
}

/** A request as rules see it. */
export interface Facts {
  method: string;
  who: string;
  /** tools/call: the tool named, as the catalog names it (a virtual server's rewrite done), if it has it. */
  tool: string | undefined;
  /** The upstream that serves the request; undefined when none does (lists, ping) or it is unknown. */
  server: string | undefined;
}

/** A rule's `match` keys, compiled: each given key must fit (absent: any). */
export class FactsMatch {
  readonly #servers: GlobMatcher[] | undefined;
  readonly #tools: GlobMatcher[] | undefined;
  readonly #methods: GlobMatcher[] | undefined;
  readonly #principals: GlobMatcher[] | undefined;

  constructor(match: { servers?: string[]; tools?: string[]; methods?: string[]; principals?: string[] } | undefined) {
    this.#servers = match?.servers?.map(compileGlob);
    this.#tools = match?.tools?.map(compileGlob);
    this.#methods = match?.methods?.map(compileGlob);
    this.#principals = match?.principals?.map(compileGlob);
  }

  get needsServer(): boolean {
    return this.#servers !== undefined;
  }

  fits(facts: Facts): boolean {
    return (
      fits(this.#methods, facts.method) &&
      fits(this.#principals, facts.who) &&
      fits(this.#tools, facts.tool) &&
      fits(this.#servers, facts.server)
    );
  }
}

const fits = (globs: GlobMatcher[] | undefined, subject: string | undefined): boolean =>
  globs === undefined || (subject !== undefined && globs.some((g) => g.test(subject)));

/** Who a request is, for rules: its principal, else its client address, else its scope. */
export function requester(ctx: RequestContext): string {
  return ctx.principal ?? (ctx.remoteAddress !== undefined ? `address:${ctx.remoteAddress}` : `scope:${ctx.scope}`);
}

/**
 * A tools/call's tool only when the catalog has it: an unknown name is refused anyway, and counting
 * it would let a client mint counters (keys in Redis) with names of its own. `servers`: whether
 * any rule asks which upstream serves a prompt or resource (a tool's is known anyway).
 */
export function factsOf(ctx: RequestContext, request: JsonRpcRequest, routes: RoutesOf, servers: boolean): Facts {
  const params = request.params;
  const name = typeof params?.name === 'string' ? params.name : undefined;
  let tool: string | undefined;
  let server: string | undefined;
  if (request.method === 'tools/call' && name !== undefined) {
    server = routes.tool(name)?.upstream;
    if (server !== undefined) tool = name;
  } else if (servers) {
    if (request.method === 'prompts/get' && name !== undefined) server = routes.prompt(name)?.upstream;
    else if (typeof params?.uri === 'string' && request.method.startsWith('resources/'))
      server = routes.resource(params.uri)?.upstream;
  }
  return { method: request.method, who: requester(ctx), tool, server };
}
