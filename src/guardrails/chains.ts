// The configured interceptor lists (the top level's, a virtual server's, an upstream's) compiled
// into chains, and one message's phase run through a chain: each verdict published
// (`guardrail:verdict`: metrics and the audit log hear it), a block thrown as GUARDRAIL_BLOCKED
// naming the interceptor and the kinds, never the text.
//
// The order: a message on its way to an upstream (a call's arguments, a client's answer to an
// upstream's ask) passes the top level's list, then the endpoint's, then the upstream's; one on its
// way to a client (a result, an upstream's ask) the reverse, so the top level has the last word on
// what a client sees. Within one list, its written order either way (`[secrets, size]` redacts
// before it cuts). An ask's endpoint is the one its client came to (RequestContext.endpoint).
import type { Logger } from 'pino';
import { isServerEntry, type InterceptorConfig } from '../config/interceptors.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { ClientIdentity, McpResult } from '../contracts/upstream.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { LATEST_VERSION } from '../jsonrpc/versions.js';
import type { DataPathEvents } from '../observability/events.js';
import { builtinInterceptor, type Interceptor, type Phase } from './builtin-interceptors.js';
import { InterceptorServer } from './interceptor-server.js';

/** One message's interceptors per phase, in the order they run. */
export interface Chain {
  readonly request: readonly Interceptor[];
  readonly response: readonly Interceptor[];
}

export const NO_CHAIN: Chain = { request: [], response: [] };

/** The requests an upstream sends its client that guardrails see (roots/list asks for nothing a guard reads). */
export const GUARDED_ASKS: ReadonlySet<string> = new Set(['sampling/createMessage', 'elicitation/create']);

/** Who a message is for: what a verdict, its audit line and an interceptor server's context carry. */
export interface Who {
  readonly principal?: string | undefined;
  readonly requestId?: string | undefined;
}

export function whoOf(ctx: RequestContext): Who {
  return { principal: ctx.principal, requestId: ctx.http?.requestId };
}

export interface GuardrailsDeps {
  diagnostics: DataPathEvents;
  log: Logger;
  /** An upstream's own list (`upstreams[].interceptors`), read per message: a reload's new entry applies at once. */
  upstreamList?: (upstream: string) => readonly InterceptorConfig[] | undefined;
  /** A virtual server's own list (`servers[].interceptors`) by its path, read per message as the upstream's is. */
  endpointList?: (path: string) => readonly InterceptorConfig[] | undefined;
}

/** Who the gateway is to an interceptor server: a client that offers it nothing to ask. */
const INTERCEPTOR_CLIENT: ClientIdentity = {
  clientInfo: { name: 'mcp-gateway-interceptors', version: '1' },
  capabilities: {},
  protocolVersion: LATEST_VERSION,
};

/** One list compiled: for calls (size on responses only) and for asks (no size: it caps results). */
interface Compiled {
  call: Chain;
  ask: Chain;
}

const NONE: Compiled = { call: NO_CHAIN, ask: NO_CHAIN };
/** Chains by endpoint list, then upstream list. */
type ByLists = WeakMap<readonly InterceptorConfig[], WeakMap<readonly InterceptorConfig[], Chain>>;
/** The key of "no list" in the caches (a WeakMap takes objects only). */
const ABSENT: readonly InterceptorConfig[] = [];

export class Guardrails {
  /** Keyed by what the entry says: a reload that keeps an entry keeps its connection. */
  readonly #servers = new Map<string, InterceptorServer>();
  readonly #compiled = new WeakMap<readonly InterceptorConfig[], Compiled>();
  /** Call and ask chains by endpoint list, then upstream list (compiled once per config: a reload makes new ones). */
  readonly #layered: Record<keyof Compiled, ByLists> = { call: new WeakMap(), ask: new WeakMap() };
  readonly #top: Compiled;

  constructor(
    topLevel: readonly InterceptorConfig[] | undefined,
    private readonly deps: GuardrailsDeps,
  ) {
    this.#top = this.#compile(topLevel ?? ABSENT);
  }

  /**
   * The chain of a tools/call, prompts/get or resources/read that came to an endpoint with `endpoint`'s list (a
   * virtual server's) and goes to `upstream`: NO_CHAIN when no list has an interceptor on.
   */
  callChain(endpoint: readonly InterceptorConfig[] | undefined, upstream: string | undefined): Chain {
    return this.#chain('call', endpoint, upstream);
  }

  /**
   * The chain of `upstream`'s ask (sampling, elicitation) of a client that came to an endpoint with `endpoint`'s
   * list: its request goes to the client, its answer back; so the upstream's list runs first on the request and last
   * on the answer (the reverse of a call's).
   */
  askChain(endpoint: readonly InterceptorConfig[] | undefined, upstream: string): Chain {
    return this.#chain('ask', endpoint, upstream);
  }

  /** The list of the virtual server at `path` (a request context's `endpoint`), as configured now. */
  endpointList(path: string | undefined): readonly InterceptorConfig[] | undefined {
    return path === undefined ? undefined : this.deps.endpointList?.(path);
  }

  /** `value` through `interceptors` in turn (those whose events leave `method` out skipped): what goes on. */
  async run(
    interceptors: readonly Interceptor[],
    phase: Phase,
    method: string,
    who: Who,
    value: unknown,
  ): Promise<unknown> {
    let current = value;
    for (const interceptor of interceptors) {
      if (interceptor.events && !interceptor.events.has(method)) continue;
      current = await this.runOne(interceptor, phase, method, who, current);
    }
    return current;
  }

  /** One interceptor over one message: its verdict published; blocked, GUARDRAIL_BLOCKED. */
  async runOne(interceptor: Interceptor, phase: Phase, method: string, who: Who, value: unknown): Promise<unknown> {
    const started = performance.now();
    const outcome = await interceptor.run(value, phase, { method, principal: who.principal, requestId: who.requestId });
    this.deps.diagnostics.emit('guardrail:verdict', {
      interceptor: interceptor.name,
      phase,
      method,
      verdict: outcome.verdict,
      kinds: outcome.kinds,
      seconds: (performance.now() - started) / 1000,
      requestId: who.requestId,
      principal: who.principal,
    });
    if (outcome.verdict === 'blocked')
      throw new GatewayError('GUARDRAIL_BLOCKED', `Refused by the ${interceptor.name} guardrail (${phase})`, {
        interceptor: interceptor.name,
        phase,
        kinds: outcome.kinds,
      });
    return typeof outcome.value === 'object' && outcome.value !== null ? outcome.value : value;
  }

  /**
   * An upstream's ask on its way: its params through the chain's request phase, then `send` (to the
   * client), then the answer through the response phase. A block in the first phase sends nothing:
   * the upstream gets GUARDRAIL_BLOCKED as its answer, and the client never sees the ask.
   */
  async ask(
    upstream: string,
    ctx: RequestContext | undefined,
    method: string,
    params: Record<string, unknown> | undefined,
    send: (params: Record<string, unknown> | undefined) => Promise<McpResult>,
  ): Promise<McpResult> {
    const chain = GUARDED_ASKS.has(method) ? this.askChain(this.endpointList(ctx?.endpoint), upstream) : NO_CHAIN;
    if (chain === NO_CHAIN) return send(params);
    const who = ctx ? whoOf(ctx) : {};
    const sent = chain.request.length > 0 ? await this.askRequest(chain, who, method, params) : params;
    const answer = await send(sent);
    return chain.response.length > 0
      ? ((await this.run(chain.response, 'response', method, who, answer)) as McpResult)
      : answer;
  }

  /** An ask's params through the request phase of `chain` (toward the client). */
  async askRequest(
    chain: Chain,
    who: Who,
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    if (params === undefined) return params;
    return (await this.run(chain.request, 'request', method, who, params)) as Record<string, unknown>;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#servers.values()].map((s) => s.close()));
  }

  /**
   * The three lists layered for `kind`: toward the upstream (a call's request, an ask's answer) the top level's, the
   * endpoint's, the upstream's; toward the client (a call's result, an ask's request) the reverse.
   */
  #chain(
    kind: keyof Compiled,
    endpoint: readonly InterceptorConfig[] | undefined,
    upstream: string | undefined,
  ): Chain {
    const own = this.#upstreamList(upstream);
    const ep = endpoint && endpoint.length > 0 ? endpoint : ABSENT;
    if (ep === ABSENT && own === ABSENT) return this.#top[kind];
    const cache = this.#layered[kind];
    let byUpstream = cache.get(ep);
    if (!byUpstream) cache.set(ep, (byUpstream = new WeakMap()));
    let chain = byUpstream.get(own);
    if (!chain) {
      const [top, mid, inner] = [this.#top[kind], this.#compile(ep)[kind], this.#compile(own)[kind]];
      const toUpstream = (p: Phase) => [...top[p], ...mid[p], ...inner[p]];
      const toClient = (p: Phase) => [...inner[p], ...mid[p], ...top[p]];
      chain =
        kind === 'call'
          ? layered(toUpstream('request'), toClient('response'))
          : layered(toClient('request'), toUpstream('response'));
      byUpstream.set(own, chain);
    }
    return chain;
  }

  #upstreamList(upstream: string | undefined): readonly InterceptorConfig[] {
    const list = upstream === undefined ? undefined : this.deps.upstreamList?.(upstream);
    return list && list.length > 0 ? list : ABSENT;
  }

  #compile(configs: readonly InterceptorConfig[]): Compiled {
    if (configs === ABSENT) return NONE;
    let compiled = this.#compiled.get(configs);
    if (compiled) return compiled;
    const on = configs.filter((c) => c.mode !== 'off');
    const phase = (p: Phase, ask: boolean) =>
      on
        .filter(
          (c) =>
            isServerEntry(c) ||
            ((c.name !== 'size' || (!ask && p === 'response')) && (c.phases ?? ['request', 'response']).includes(p)),
        )
        .map((c) => this.#interceptorOf(c));
    compiled =
      on.length === 0
        ? NONE
        : {
            call: layered(phase('request', false), phase('response', false)),
            ask: layered(phase('request', true), phase('response', true)),
          };
    this.#compiled.set(configs, compiled);
    return compiled;
  }

  #interceptorOf(c: InterceptorConfig): Interceptor {
    if (!isServerEntry(c)) return builtinInterceptor(c);
    const key = JSON.stringify(c);
    let server = this.#servers.get(key);
    if (!server) {
      const { diagnostics, log } = this.deps;
      server = new InterceptorServer(c, { diagnostics, log, identity: INTERCEPTOR_CLIENT });
      // An entry a reload dropped stays here, its connection closed once idle (InterceptorServer), until shutdown.
      this.#servers.set(key, server);
    }
    return server;
  }
}

/** NO_CHAIN when both phases are empty: the callers' one comparison for "nothing to run". */
function layered(request: readonly Interceptor[], response: readonly Interceptor[]): Chain {
  return request.length === 0 && response.length === 0 ? NO_CHAIN : { request, response };
}
