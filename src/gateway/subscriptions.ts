// Resource subscriptions: which client scopes listen to a resource of a shared upstream (whose
// updates carry no session), and the listen streams of stateless clients.
import type { Logger } from 'pino';
import { NO_IDENTITY } from '../upstream/worker-set.js';
import type { JsonRpcNotification } from '../jsonrpc/messages.js';
import type { MessageSink, RequestContext } from '../contracts/request-context.js';
import type { CatalogManager } from './catalog-manager.js';
import type { PerSessionRouter } from './per-session-router.js';
import type { ResourceUris } from './resource-uris.js';
import { offersSubscriptions, upstreamInfo, type UpstreamEntry } from './upstream-entry.js';

export interface SubscriptionsOptions {
  upstreams: ReadonlyMap<string, UpstreamEntry>;
  catalogs: CatalogManager;
  perSession: PerSessionRouter;
  /** Upstreams whose resource URIs are prefixed: updates leave with the client's URI. */
  uris: ResourceUris;
  log: Logger;
}

export class Subscriptions {
  /** `${upstream}\0${uri}` → the scopes subscribed to it through a shared upstream. */
  readonly #listeners = new Map<string, Map<string, MessageSink>>();

  constructor(private readonly options: SubscriptionsOptions) {}

  /** A resources/subscribe or unsubscribe the upstream accepted. */
  record(ctx: RequestContext, method: string, upstream: string, uri: string): void {
    // A shared worker's updates carry no session: the gateway remembers who subscribed.
    if (this.options.upstreams.get(upstream)?.workers.perScope !== false) return;
    if (method === 'resources/subscribe') {
      const sink = ctx.sessionSink;
      if (sink) this.#listen(upstream, uri, ctx.scope, sink);
    } else {
      this.#listeners.get(listenerKey(upstream, uri))?.delete(ctx.scope);
    }
  }

  /**
   * Resource updates for a stateless client's listen stream (`ctx.scope` is the stream's, and
   * `ctx` says who listens): the URIs it can follow, now subscribed upstream; updates go to
   * `sink` until the scope is released.
   */
  watch(ctx: RequestContext, uris: unknown, sink: MessageSink): string[] {
    if (!Array.isArray(uris)) return [];
    const { upstreams, catalogs, perSession, log } = this.options;
    const watched: string[] = [];
    const refused = (upstream: string, uri: string) => (err: unknown) =>
      log.warn(
        { upstream, uri, err: err instanceof Error ? err.message : String(err) },
        'upstream refused a resource subscription',
      );
    for (const uri of new Set(uris)) {
      if (typeof uri !== 'string') continue;
      const route = catalogs.catalog.resource(uri);
      const entry = route && upstreams.get(route.upstream);
      if (!route || !entry) continue;
      if (!offersSubscriptions(upstreamInfo(entry))) continue;
      // Subscribing again is harmless upstream; a failure leaves the stream quiet for this URI.
      const original = route.original;
      if (!entry.workers.perScope) {
        // A shared worker holds the subscription for everyone; the gateway remembers who listens.
        this.#listen(route.upstream, original, ctx.scope, sink);
        entry.workers
          .call('resources/subscribe', { uri: original }, undefined, ctx.scope, NO_IDENTITY)
          .promise.catch(refused(route.upstream, uri));
      } else {
        perSession
          .call(
            listenerContext(ctx, sink),
            route.upstream,
            'resources/subscribe',
            { uri: original },
            undefined,
            () => undefined,
          )
          .catch(refused(route.upstream, uri));
      }
      watched.push(uri);
    }
    return watched;
  }

  /** A shared upstream's notifications/resources/updated, to every scope that listens. */
  deliver(upstream: string, n: JsonRpcNotification): void {
    if (typeof n.params?.uri !== 'string') return;
    const listeners = this.#listeners.get(listenerKey(upstream, n.params.uri));
    if (!listeners) return;
    const update = this.options.uris.notification(upstream, n);
    for (const sink of listeners.values()) sink.send(update);
  }

  /** The scope ended: it listens to nothing any more. */
  release(scope: string): void {
    for (const scopes of this.#listeners.values()) scopes.delete(scope);
  }

  #listen(upstream: string, uri: string, scope: string, sink: MessageSink): void {
    const key = listenerKey(upstream, uri);
    const scopes = this.#listeners.get(key) ?? new Map<string, MessageSink>();
    this.#listeners.set(key, scopes.set(scope, sink));
  }
}

function listenerKey(upstream: string, uri: string): string {
  return `${upstream}\u0000${uri}`;
}

/**
 * A listen stream as the session of its own per-session worker: the worker lives until the stream
 * closes (its scope is released), and only resource updates travel back. It is offered no client
 * capabilities: nobody could answer a request on a listen stream.
 */
function listenerContext(ctx: RequestContext, sink: MessageSink): RequestContext {
  const updates: MessageSink = {
    send: (m) => 'method' in m && !('id' in m) && m.method === 'notifications/resources/updated' && sink.send(m),
  };
  return { ...ctx, stateless: false, clientCapabilities: {}, sink: updates, sessionSink: updates };
}
