// Keeps the catalog current: loads every upstream's lists, refreshes them when they change or an
// upstream comes up, hides upstreams that are down, and builds each Catalog version with its
// tools' argument checks.
import type { Logger } from 'pino';
import type { ClientIdentity, UpstreamCall } from '../contracts/upstream.js';
import { ArgumentValidator } from './argument-validator.js';
import { Catalog, LISTS, entriesOf, type ListKind, type UpstreamLists } from './catalog.js';
import { changedEntries, changedLists, inConfigOrder } from './catalog-changes.js';
import type { PinPolicy } from './pin-policy.js';
import { upstreamInfo, type UpstreamEntry } from './upstream-entry.js';

const MAX_LIST_PAGES = 100;
/**
 * How far apart the refreshes a per-session worker's list_changed asks for are, per upstream.
 * Some upstreams announce a change as each worker starts (server-everything does): one refresh
 * per new session would be a probe process per session. The changes that come meanwhile are
 * refreshed together at the end of it. Not longer: a real change must reach listen streams
 * within a client's patience (the conformance suite waits 1.5 s; at 5 s it missed two).
 */
export const SPACED_REFRESH_MS = 1_000;

/** One upstream's spaced refreshes: when the last began, and the list changes waiting for the next. */
interface Spaced {
  last: number;
  timer: NodeJS.Timeout | undefined;
  methods: Set<string>;
}

/** A reload's catalog, built and checked but not in place yet. */
export interface StagedCatalog {
  /** The list_changed notifications its apply() sends: one per kind of list that differs. */
  readonly methods: readonly string[];
  /** The catalog it gives, checked for collisions (what a reload checks the virtual servers against). */
  readonly catalog: Catalog;
  /** Puts it in place (the caller has put the staged entries in the upstream map) and announces `methods`. */
  apply(): void;
}

export interface CatalogManagerOptions {
  upstreams: ReadonlyMap<string, UpstreamEntry>;
  /** How the gateway introduces itself to a per-session upstream it probes for its lists. */
  probeIdentity: ClientIdentity;
  log: Logger;
  /** Tools and prompts held to the pin lock (none: every definition is served). */
  pins?: PinPolicy;
}

export class CatalogManager {
  #catalog = new Catalog([]);
  readonly #lists = new Map<string, UpstreamLists>();
  readonly #listChangedListeners: Array<(method: string) => void> = [];
  /** Remote upstreams whose circuit is open: out of the catalog until they recover. */
  readonly #down = new Set<string>();
  #started = false;
  #closed = false;
  readonly #arguments: ArgumentValidator;
  readonly #spaced = new Map<string, Spaced>();

  constructor(private readonly options: CatalogManagerOptions) {
    this.#arguments = new ArgumentValidator({
      log: options.log,
      enabled: (upstream) => options.upstreams.get(upstream)?.validateArguments !== false,
    });
    options.pins?.onChange(() => this.repin());
  }

  /** The current version: a request reads it once and keeps it, a refresh swaps in the next. */
  get catalog(): Catalog {
    return this.#catalog;
  }

  /**
   * Starts every upstream pool and builds the catalog from the ones that came up. An upstream
   * that fails to start is retried in the background and joins the catalog when it does; a
   * name collision between upstreams is a start-up error, thrown as soon as it shows.
   */
  async start(): Promise<void> {
    const { upstreams, log } = this.options;
    await Promise.all(
      [...upstreams].map(async ([name, entry]) => {
        entry.workers.onInfo(() => {
          // An upstream that was down at start-up: add its lists once it is up.
          if (this.#started && !this.#lists.has(name)) this.refreshLater(name);
        });
        try {
          this.#lists.set(name, await this.#loadLists(name, entry));
        } catch (err) {
          log.error(
            { upstream: name, err: err instanceof Error ? err.message : String(err) },
            'upstream unavailable at start-up; retrying in the background',
          );
          return;
        }
        // A collision ends start-up as soon as the second list is in, not after the slowest upstream.
        this.#catalog = new Catalog([...this.#lists.values()], this.#down, undefined, this.options.pins);
      }),
    );
    this.#catalog = this.#buildCatalog(this.#lists);
    this.#started = true;
  }

  /** Whether every configured upstream's lists are in the catalog (none still down since start-up). */
  get complete(): boolean {
    return this.#lists.size === this.options.upstreams.size;
  }

  /** Whether `upstream`'s lists are in the catalog. */
  listed(upstream: string): boolean {
    return this.#lists.has(upstream);
  }

  /** `upstream`'s lists in the catalog (a refresh replaces the object). */
  listsOf(upstream: string): UpstreamLists | undefined {
    return this.#lists.get(upstream);
  }

  /**
   * How the gateway introduces itself when it probes for the catalog (what it declares decides what some upstreams
   * list).
   */
  get probeIdentity(): ClientIdentity {
    return this.options.probeIdentity;
  }

  /** `name`'s lists as a probe initialized as `identity` gets them (the catalog keeps its own). */
  listsAs(name: string, identity: ClientIdentity): Promise<UpstreamLists> {
    const entry = this.options.upstreams.get(name);
    if (!entry) return Promise.reject(new Error(`upstream ${name} is not configured`));
    return this.#loadLists(name, entry, identity);
  }

  /** Tells every listener that lists changed (the virtual servers' views did, say). */
  announce(methods: readonly string[]): void {
    this.#announce(methods);
  }

  /**
   * The catalog a reload would give (see StagedCatalog): the lists of `entries` (added upstreams,
   * or changed ones under their new entry) loaded, which starts their workers, and those of
   * `removed` dropped. A name collision throws here, and nothing has changed. An upstream that
   * does not come up is left out and joins when it does, as at start-up.
   */
  async stage(entries: ReadonlyMap<string, UpstreamEntry>, removed: readonly string[]): Promise<StagedCatalog> {
    const { log } = this.options;
    const loaded = new Map<string, UpstreamLists>();
    await Promise.all(
      [...entries].map(async ([name, entry]) => {
        try {
          loaded.set(name, await this.#loadLists(name, entry));
        } catch (err) {
          log.error(
            { upstream: name, err: err instanceof Error ? err.message : String(err) },
            'reload: upstream unavailable; retrying in the background',
          );
        }
      }),
    );
    const staged = (lists: ReadonlyMap<string, UpstreamLists>) => {
      const next = new Map(lists);
      for (const name of [...removed, ...entries.keys()]) next.delete(name);
      for (const [name, l] of loaded) next.set(name, l);
      return next;
    };
    const checked = staged(this.#lists);
    // A collision throws here, before anything has changed.
    const checkedCatalog = new Catalog([...checked.values()], this.#down, undefined, this.options.pins);
    const methods = changedLists(this.#lists, checked);
    return {
      methods,
      catalog: checkedCatalog,
      apply: () => {
        for (const [name, entry] of entries) {
          entry.workers.onInfo(() => {
            if (this.options.upstreams.has(name) && !this.#lists.has(name)) this.refreshLater(name);
          });
        }
        for (const name of removed) this.#down.delete(name);
        // Over the lists as they are now: a refresh of another upstream may have landed meanwhile.
        let next = staged(this.#lists);
        let catalog: Catalog;
        try {
          catalog = this.#buildCatalog(inConfigOrder(next, this.options.upstreams));
        } catch {
          next = checked; // a refresh that landed meanwhile collides with the reload: the checked lists win
          catalog = this.#buildCatalog(inConfigOrder(next, this.options.upstreams));
        }
        this.#lists.clear();
        for (const [name, lists] of inConfigOrder(next, this.options.upstreams)) this.#lists.set(name, lists);
        this.#catalog = catalog;
        this.#announce(methods);
      },
    };
  }

  /**
   * The pin lock or modes changed (a reload): the catalog is built again over the lists it has,
   * and the list_changed of each kind whose entries differ sent. Returns those methods.
   */
  repin(): string[] {
    const before = this.#catalog;
    this.#catalog = this.#buildCatalog(this.#lists);
    const methods = changedEntries(before, this.#catalog);
    this.#announce(methods);
    return methods;
  }

  /** Called with a list_changed method after the merged catalog changed. */
  onListChanged(listener: (method: string) => void): void {
    this.#listChangedListeners.push(listener);
  }

  /** Reloads an upstream's lists now (its first user's worker just started, say). */
  refreshNow(name: string): Promise<void> {
    return this.#refresh(name);
  }

  /** Reloads an upstream's lists in the background (`method`: the list_changed it sent, if any). */
  refreshLater(name: string, method?: string): void {
    this.#refreshInBackground(name, method === undefined ? undefined : [method]);
  }

  /** As refreshLater, for a per-session worker's list_changed: at most one refresh per SPACED_REFRESH_MS. */
  refreshSpaced(name: string, method: string): void {
    let spaced = this.#spaced.get(name);
    if (!spaced) {
      spaced = { last: -Infinity, timer: undefined, methods: new Set() };
      this.#spaced.set(name, spaced);
    }
    spaced.methods.add(method);
    if (spaced.timer || this.#closed) return;
    const entry = spaced;
    entry.timer = setTimeout(
      () => {
        entry.timer = undefined;
        entry.last = Date.now();
        const methods = [...entry.methods];
        entry.methods.clear();
        this.#refreshInBackground(name, methods);
      },
      Math.max(0, entry.last + SPACED_REFRESH_MS - Date.now()),
    );
    entry.timer.unref();
  }

  /** No refresh starts after this (a probe is a process, and the workers are stopping). */
  close(): void {
    this.#closed = true;
    for (const spaced of this.#spaced.values()) clearTimeout(spaced.timer);
  }

  #refreshInBackground(name: string, methods: readonly string[] | undefined): void {
    if (this.#closed) return;
    void this.#refresh(name, methods).catch((err: unknown) =>
      this.options.log.error(
        { upstream: name, err: err instanceof Error ? err.message : String(err) },
        'catalog refresh failed',
      ),
    );
  }

  /**
   * A remote upstream went down (its tools, prompts and resources leave the catalog, and every
   * session hears list_changed) or came back (they are listed again, with list_changed).
   */
  setAvailable(upstream: string, available: boolean): void {
    if (available === !this.#down.has(upstream)) return;
    if (available) this.#down.delete(upstream);
    else this.#down.add(upstream);
    const lists = this.#lists.get(upstream);
    if (lists) {
      // Its routes stay: a call to one of its tools fails fast with the upstream's own error.
      this.#catalog = this.#buildCatalog(this.#lists);
      this.options.log.warn(
        { upstream },
        available ? 'upstream back: its entries are listed again' : 'upstream down: its entries are no longer listed',
      );
      const methods: string[] = [];
      if (lists.lists.tools?.length) methods.push('notifications/tools/list_changed');
      if (lists.lists.prompts?.length) methods.push('notifications/prompts/list_changed');
      if (lists.lists.resources?.length || lists.lists.resourceTemplates?.length)
        methods.push('notifications/resources/list_changed');
      this.#announce(methods);
    }
    // It may come back with other lists (or, down at start-up, with its first ones).
    if (available) this.refreshLater(upstream);
  }

  /**
   * A catalog beside the gateway's: its lists, with `own` (a session's own workers' lists) in
   * place of those upstreams' shared ones. Throws CatalogCollisionError as a build would.
   */
  withLists(own: ReadonlyMap<string, UpstreamLists>): Catalog {
    const lists = new Map(this.#lists);
    for (const [name, l] of own) if (lists.has(name)) lists.set(name, l);
    return new Catalog([...lists.values()], this.#down, this.#arguments.detached(), this.options.pins);
  }

  /** `name`'s lists as `call` (one session's worker) gives them, filtered and named as the shared ones are. */
  listsVia(
    name: string,
    call: (method: string, params: Record<string, unknown> | undefined) => UpstreamCall,
  ): Promise<UpstreamLists> {
    const entry = this.options.upstreams.get(name);
    if (!entry) return Promise.reject(new Error(`upstream ${name} is not configured`));
    return this.#fetchLists(name, entry, call);
  }

  #announce(methods: readonly string[]): void {
    for (const m of methods) for (const l of this.#listChangedListeners) l(m);
  }

  /** A new catalog version; its tools keep the compiled argument checks of unchanged schemas. */
  #buildCatalog(lists: ReadonlyMap<string, UpstreamLists>): Catalog {
    const checks = this.#arguments.nextVersion();
    const catalog = new Catalog([...lists.values()], this.#down, checks, this.options.pins);
    checks.commit();
    return catalog;
  }

  /** Lists from a shared pool's workers, or from a probe worker of a per-session upstream. */
  #loadLists(name: string, entry: UpstreamEntry, identity = this.options.probeIdentity): Promise<UpstreamLists> {
    return entry.workers.probe(identity, (probe) => this.#fetchLists(name, entry, (m, p) => probe.call(m, p)));
  }

  async #fetchLists(
    name: string,
    entry: UpstreamEntry,
    call: (method: string, params: Record<string, unknown> | undefined) => UpstreamCall,
  ): Promise<UpstreamLists> {
    const info = upstreamInfo(entry);
    const lists: UpstreamLists['lists'] = {};
    for (const kind of Object.keys(LISTS) as ListKind[]) {
      const spec = LISTS[kind];
      if (!info || info.capabilities[spec.capability] === undefined) continue;
      const all: Array<Record<string, unknown>> = [];
      let cursor: unknown;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const result = await call(spec.method, cursor === undefined ? undefined : { cursor }).promise;
        all.push(...entriesOf(kind, result));
        cursor = result.nextCursor;
        if (typeof cursor !== 'string' || cursor === '') break;
      }
      lists[kind] =
        kind === 'tools' && entry.offersTool
          ? all.filter((t) => typeof t.name === 'string' && entry.offersTool!(t.name))
          : all;
    }
    return entry.prefixUris
      ? { name, prefix: entry.prefix, uriPrefix: entry.prefix, lists }
      : { name, prefix: entry.prefix, lists };
  }

  async #refresh(name: string, methods?: readonly string[]): Promise<void> {
    const entry = this.options.upstreams.get(name);
    if (!entry) return;
    const lists = await this.#loadLists(name, entry);
    // A reload replaced the entry while its lists loaded: the new entry's lists are in place, and
    // these (the old filter, the old workers) must not overwrite them.
    if (this.options.upstreams.get(name) !== entry) return;
    const next = new Map(this.#lists).set(name, lists);
    try {
      this.#catalog = this.#buildCatalog(next);
      this.#lists.set(name, lists);
      this.options.log.info({ upstream: name }, 'catalog refreshed');
      this.#announce(
        methods ?? [
          'notifications/tools/list_changed',
          'notifications/prompts/list_changed',
          'notifications/resources/list_changed',
        ],
      );
    } catch (err) {
      this.options.log.error({ upstream: name, err: (err as Error).message }, 'upstream left out of the catalog');
    }
  }
}
