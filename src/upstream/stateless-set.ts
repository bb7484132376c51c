import type { Logger } from 'pino';
import { GatewayError, UpstreamRpcError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import { META } from '../jsonrpc/meta-keys.js';
import type {
  CacheHints,
  CallOptions,
  ClientIdentity,
  McpResult,
  UpstreamConnection,
  UpstreamCall,
  UpstreamPeer,
  UpstreamServerInfo,
} from '../contracts/upstream.js';
import { Backoff } from '../timing/backoff.js';
import { LIST_METHODS } from '../jsonrpc/list-methods.js';
import type { HttpEndpoint } from './wires/http-endpoint.js';
import { isCacheable, type ResultCache } from './result-cache.js';
import { STATELESS_REVISION, StatelessHttpWire } from './wires/stateless-http.js';
import type { PoolState, PoolStatus, UpstreamCaller, WorkerSet } from './worker-set.js';

/**
 * When a server/discover result names no usable ttlMs (none, negative, not a finite number): how
 * long what it said is taken as current; also the longest when the result cache is off.
 */
const DEFAULT_DISCOVER_TTL_MS = 300_000;
/** A ttlMs below this is refreshed at this pace: a server asking for 0 must not be asked per request. */
const MIN_DISCOVER_TTL_MS = 1000;

/**
 * How long a server/discover result stands before the next request starts a refresh: its ttlMs,
 * at most `maxMs` (a ttlMs of hours would hide a changed server that long), at least
 * MIN_DISCOVER_TTL_MS. However many clients ask meanwhile, the upstream is asked once per ttl.
 */
export function discoverTtl(result: McpResult, maxMs: number): number {
  const said = result.ttlMs;
  const ttl = typeof said === 'number' && Number.isFinite(said) && said >= 0 ? said : DEFAULT_DISCOVER_TTL_MS;
  return Math.max(MIN_DISCOVER_TTL_MS, Math.min(ttl, maxMs));
}

/** Resources the listen stream follows for the gateway's subscribers, at most. */
const MAX_WATCHED = 1000;
const DONE: UpstreamCall = Object.freeze({ promise: Promise.resolve({}), cancel: () => undefined });

/** The `_meta` a request of the gateway's own carries (discover, lists): who it is, what it declares. */
export function identityMeta(identity: ClientIdentity): Record<string, unknown> {
  return {
    [META.protocolVersion]: STATELESS_REVISION,
    [META.clientCapabilities]: identity.capabilities,
    [META.clientInfo]: identity.clientInfo,
  };
}

/** Whether params already carry a request's 2026-07-28 `_meta` (a client's, built by the gateway). */
export function hasStatelessMeta(params: Record<string, unknown> | undefined): boolean {
  return isObject(params?._meta) && params._meta[META.protocolVersion] !== undefined;
}

/** Whether an error of server/discover says the upstream does not speak 2026-07-28 (as against: cannot be reached). */
export function refusesStateless(err: unknown): boolean {
  if (err instanceof UpstreamRpcError) return true;
  // (UPSTREAM_IDENTITY_REFUSED: it refuses the gateway's own discovery, as one that serves users only
  // does; its 2025 side is tried, as a 401 always led to.)
  return (
    err instanceof GatewayError && (err.type === 'UPSTREAM_PROTOCOL_ERROR' || err.type === 'UPSTREAM_IDENTITY_REFUSED')
  );
}

export interface StatelessSetOptions {
  name: string;
  endpoint: HttpEndpoint;
  /** How the gateway introduces itself on requests of its own. */
  identity: ClientIdentity;
  /** Where the upstream's list changes and resource updates go (its listen stream). */
  peer: UpstreamPeer;
  log: Logger;
  /**
   * Where its cacheable results are kept as their hints allow (none: every call goes upstream);
   * its maxTtlMs bounds server/discover's refresh too.
   */
  cache?: ResultCache | undefined;
}

/**
 * An upstream of the 2026-07-28 era: no workers, no sessions. Every call is a stateless POST
 * carrying its client's `_meta` (the dispatcher builds it; requests of the gateway's own carry
 * the gateway's). What the upstream is (capabilities, serverInfo, versions) comes from
 * `server/discover`, refreshed as its ttlMs says; its list changes come over one
 * `subscriptions/listen` stream. A set with nothing per scope: calls run on any replica.
 */
export class StatelessSet implements WorkerSet {
  readonly perScope = false;
  readonly speaksStateless = true;
  readonly scopes = 0;
  readonly #wire: StatelessHttpWire;
  readonly #infoListeners: Array<(info: UpstreamServerInfo) => void> = [];
  readonly #refusedListeners: Array<(err: unknown) => void> = [];
  readonly #hints = new Map<string, CacheHints>();
  /** Resources some client subscribed to (through the gateway's subscriptions): the listen stream follows them. */
  readonly #watched = new Set<string>();
  readonly #retry = new Backoff({ initialMs: 500, maxMs: 30_000 });
  #info: UpstreamServerInfo | undefined;
  #versions: readonly string[] = [];
  #expiresAt = 0;
  #discovering: Promise<UpstreamServerInfo> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #lastError: { message: string; at: number } | undefined;
  #closed = false;
  /** Its entries in the result cache: this set's, not its upstream name's (a reload's new set has none of them). */
  readonly #cacheOwner: string;

  constructor(private readonly options: StatelessSetOptions) {
    this.#cacheOwner = options.cache?.owner(options.name) ?? options.name;
    // The cache hears a list change before the catalog does: the refresh it starts must not be answered from it.
    this.#wire = new StatelessHttpWire(options.endpoint, options.log, (n) => {
      options.cache?.notified(this.#cacheOwner, n);
      options.peer.notification(n);
    });
  }

  get name(): string {
    return this.options.name;
  }

  get info(): UpstreamServerInfo | undefined {
    return this.#info;
  }

  /** It speaks a 2025 revision too: its 2025 clients may keep a session with it. */
  get dualEra(): boolean {
    return this.#versions.some((v) => v < STATELESS_REVISION);
  }

  onInfo(listener: (info: UpstreamServerInfo) => void): void {
    this.#infoListeners.push(listener);
  }

  /** Fires when server/discover finds the upstream up but not speaking 2026-07-28 (before it ever did). */
  onRefused(listener: (err: unknown) => void): void {
    this.#refusedListeners.push(listener);
  }

  /** The caching hints of the upstream's last answer to a list method (or undefined: none seen). */
  hints(method: string): CacheHints | undefined {
    return this.#hints.get(method);
  }

  status(): PoolStatus {
    const state: PoolState = this.#closed ? 'closed' : this.#info ? 'ready' : this.#lastError ? 'down' : 'starting';
    // No workers to count: every call is a request of its own (its in-flight ones are counted).
    return {
      state,
      workers: 0,
      ready: 0,
      inFlight: this.#wire.inFlight,
      queued: 0,
      era: 'modern',
      protocolVersion: STATELESS_REVISION,
      ...(this.#lastError
        ? { lastError: this.#lastError.message, lastErrorAt: new Date(this.#lastError.at).toISOString() }
        : {}),
    };
  }

  /**
   * server/discover (once at a time): what the upstream is. The first success opens the listen
   * stream; a failure keeps what an earlier one said and retries in the background.
   */
  discover(): Promise<UpstreamServerInfo> {
    this.#discovering ??= this.#discover().finally(() => {
      this.#discovering = undefined;
    });
    return this.#discovering;
  }

  async probe<T>(identity: ClientIdentity, use: (caller: UpstreamCaller) => Promise<T>): Promise<T> {
    if (!this.#info || Date.now() >= this.#expiresAt) await this.discover();
    const meta = identityMeta(identity);
    return use({
      call: (method, params) =>
        this.#call(method, { ...params, _meta: { ...(isObject(params?._meta) ? params._meta : {}), ...meta } }),
    });
  }

  call(method: string, params: Record<string, unknown> | undefined, options: CallOptions | undefined): UpstreamCall {
    if (this.#closed) return { promise: Promise.reject(new GatewayError('SHUTTING_DOWN')), cancel: () => undefined };
    // 2026-07-28 has no resources/subscribe: the one listen stream follows every resource subscribed to.
    if (method === 'resources/subscribe' || method === 'resources/unsubscribe')
      return this.#subscription(method, params?.uri);
    // Refreshed in the background: a request never waits for the upstream's discovery.
    if (this.#info && Date.now() >= this.#expiresAt) void this.discover().catch(() => undefined);
    const sent =
      params && hasStatelessMeta(params)
        ? params
        : {
            ...params,
            _meta: { ...(isObject(params?._meta) ? params._meta : {}), ...identityMeta(this.options.identity) },
          };
    return this.#call(method, sent, options);
  }

  workerOf(): undefined {
    return undefined;
  }

  async release(): Promise<void> {}

  async close(): Promise<void> {
    this.#closed = true;
    this.options.cache?.drop(this.#cacheOwner);
    clearTimeout(this.#retryTimer);
    this.#wire.close();
  }

  #subscription(method: string, uri: unknown): UpstreamCall {
    if (typeof uri !== 'string')
      return {
        promise: Promise.reject(new GatewayError('INVALID_PARAMS', 'params.uri must be a string')),
        cancel: () => undefined,
      };
    // Unsubscribing leaves the stream as it is: another client may still follow the resource (updates nobody wants are
    // dropped).
    if (method === 'resources/unsubscribe' || this.#watched.has(uri)) return DONE;
    if (this.#watched.size >= MAX_WATCHED)
      return {
        promise: Promise.reject(
          new GatewayError('OVERLOADED', `Upstream ${this.name}: ${MAX_WATCHED} resources are followed already`, {
            retryAfterMs: 60_000,
          }),
        ),
        cancel: () => undefined,
      };
    this.#watched.add(uri);
    this.#openListen();
    return DONE;
  }

  #call(method: string, params: Record<string, unknown>, options?: CallOptions): UpstreamCall {
    const cache = isCacheable(method) ? this.options.cache : undefined;
    const kept = cache?.get(this.#cacheOwner, method, params, options?.principal);
    if (kept) return { promise: Promise.resolve(this.#noteHints(method, kept)), cancel: () => undefined };
    const call = this.#wire.call(method, params, options);
    if (!cache && !LIST_METHODS.has(method)) return call;
    const promise = call.promise.then((result) => {
      cache?.set(this.#cacheOwner, method, params, options?.principal, result);
      return this.#noteHints(method, result);
    });
    return { promise, cancel: (e) => call.cancel(e) };
  }

  #noteHints(method: string, result: McpResult): McpResult {
    if (!LIST_METHODS.has(method)) return result;
    const hints: CacheHints = {};
    if (typeof result.ttlMs === 'number' && result.ttlMs >= 0) hints.ttlMs = result.ttlMs;
    if (result.cacheScope === 'public' || result.cacheScope === 'private') hints.cacheScope = result.cacheScope;
    this.#hints.set(method, hints);
    return result;
  }

  async #discover(): Promise<UpstreamServerInfo> {
    const { log, name, identity } = this.options;
    let result: McpResult;
    try {
      result = await this.#wire.call('server/discover', { _meta: identityMeta(identity) }).promise;
    } catch (err) {
      this.#lastError = { message: err instanceof Error ? err.message : String(err), at: Date.now() };
      if (!refusesStateless(err)) {
        this.#retryLater();
      } else if (this.#info === undefined) {
        // It answered, only not in this revision: it is up (a half-open circuit may close).
        this.options.endpoint.breaker.success();
        for (const l of this.#refusedListeners) l(err);
      }
      throw err;
    }
    const first = this.#info === undefined;
    const versions = Array.isArray(result.supportedVersions)
      ? result.supportedVersions.filter((v): v is string => typeof v === 'string')
      : [];
    if (!versions.includes(STATELESS_REVISION)) {
      const error = new GatewayError(
        'UPSTREAM_PROTOCOL_ERROR',
        `Upstream ${name}: server/discover names no version the gateway speaks (${versions.join(', ') || 'none'})`,
      );
      this.#lastError = { message: error.message, at: Date.now() };
      throw error;
    }
    const meta = isObject(result._meta) ? result._meta : {};
    const serverInfo = isObject(result.serverInfo)
      ? result.serverInfo
      : isObject(meta[META.serverInfo])
        ? meta[META.serverInfo]
        : { name, version: 'unknown' };
    this.#info = {
      protocolVersion: STATELESS_REVISION,
      capabilities: isObject(result.capabilities) ? result.capabilities : {},
      serverInfo: serverInfo as UpstreamServerInfo['serverInfo'],
      ...(typeof result.instructions === 'string' ? { instructions: result.instructions } : {}),
    };
    this.#versions = versions;
    // Bounded as the result cache bounds what it keeps (the set's own refresh, not a cache entry).
    const ttl = discoverTtl(result, this.options.cache?.maxTtlMs ?? DEFAULT_DISCOVER_TTL_MS);
    this.#expiresAt = Date.now() + ttl;
    this.#lastError = undefined;
    this.#retry.reset();
    if (first) {
      log.info(
        { upstream: name, server: this.#info.serverInfo, versions, ttlMs: ttl },
        'upstream speaks 2026-07-28 (server/discover)',
      );
      this.#openListen();
    }
    return this.#info;
  }

  /** The upstream could not be reached: discover again with backoff, and tell the listeners when it answers. */
  #retryLater(): void {
    if (this.#closed || this.#retryTimer) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      const had = this.#info !== undefined;
      this.discover().then(
        (info) => {
          if (!had) for (const l of this.#infoListeners) l(info);
        },
        () => undefined,
      );
    }, this.#retry.next());
    this.#retryTimer.unref();
  }

  #openListen(): void {
    const caps = this.#info?.capabilities ?? {};
    const listChanged = (c: unknown) => isObject(c) && c.listChanged === true;
    const filter: Record<string, unknown> = {};
    if (listChanged(caps.tools)) filter.toolsListChanged = true;
    if (listChanged(caps.prompts)) filter.promptsListChanged = true;
    if (listChanged(caps.resources)) filter.resourcesListChanged = true;
    if (this.#watched.size > 0 && isObject(caps.resources) && caps.resources.subscribe === true)
      filter.resourceSubscriptions = [...this.#watched];
    if (Object.keys(filter).length > 0) this.#wire.listen(filter, identityMeta(this.options.identity));
  }
}

/**
 * The health monitor's probe of a 2026-07-28 upstream (or of one whose era is still being
 * learned): server/discover stands in for initialize and ping. An upstream that answers but
 * refuses the revision is up all the same (it speaks 2025; EraSet learns that).
 */
export class StatelessProbe implements UpstreamConnection {
  readonly label: string;
  readonly inFlight = 0;
  readonly pendingBytes = 0;
  #info: UpstreamServerInfo | undefined;
  readonly #exitListeners: Array<(reason: string) => void> = [];

  constructor(private readonly set: StatelessSet) {
    this.label = `${set.name}#health`;
  }

  get info(): UpstreamServerInfo | undefined {
    return this.#info;
  }

  async start(): Promise<UpstreamServerInfo> {
    this.#info = await this.#check();
    return this.#info;
  }

  call(): UpstreamCall {
    let cancel: (error: Error) => void = () => undefined;
    const promise = new Promise<McpResult>((resolve, reject) => {
      cancel = reject;
      this.#check().then(() => resolve({}), reject);
    });
    return { promise, cancel };
  }

  async close(): Promise<void> {}
  onCallSettled(): void {}

  onExit(listener: (reason: string) => void): void {
    this.#exitListeners.push(listener);
  }

  async #check(): Promise<UpstreamServerInfo> {
    try {
      return await this.set.discover();
    } catch (err) {
      if (!refusesStateless(err)) throw err;
      // It speaks 2025: this check passed, and the monitor's next probe is a 2025 session (ping).
      for (const l of this.#exitListeners.splice(0)) l('speaks 2025');
      return { protocolVersion: 'unknown', capabilities: {}, serverInfo: { name: this.set.name, version: 'unknown' } };
    }
  }
}
