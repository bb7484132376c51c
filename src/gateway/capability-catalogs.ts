// What a stateless (2026-07-28) client's catalog is. Some upstreams list by what their client
// declared: a per-session one's worker for a stateless request is initialized with that
// request's capabilities, and a 2026-07-28 one reads them from each request's _meta. Such an
// upstream's part of the catalog is what it lists to a client declaring what this one declared.
//
// Without a probe per request: only four capabilities are told apart (sampling, elicitation
// form, elicitation url, roots), so an upstream has at most 16 variants of its lists. Each is
// probed once, the first time a client with that set asks, and kept while the upstream's shared
// lists stay what they were (a refresh that finds the same lists keeps them) and at most
// VARIANT_TTL_MS: a probe per set per upstream per minute at worst (a probe worker's start for a
// per-session upstream, one HTTP request per list for a 2026-07-28 one). The shared catalog's
// probe declares all four, so it is the widest variant, and a client declaring all four reads it.
import type { Logger } from 'pino';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import { UI_EXTENSION, UI_EXTENSION_SETTINGS } from '../jsonrpc/meta-keys.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { Catalog, Route, UpstreamLists } from './catalog.js';
import type { CatalogManager } from './catalog-manager.js';
import type { UpstreamEntry } from './upstream-entry.js';

/** How long a variant of an upstream's lists is used at most, its shared lists unchanged. */
const VARIANT_TTL_MS = 60_000;
/** A variant whose probe failed stands in as the shared lists this long, then is probed again. */
const FAILED_VARIANT_TTL_MS = 5_000;

/** The capabilities told apart, one letter each, in key order. */
const PARTS = ['sampling', 'form', 'url', 'roots'] as const;
type Part = (typeof PARTS)[number];
const LETTER: Record<Part, string> = { sampling: 's', form: 'f', url: 'u', roots: 'r' };

/** A call's target in a catalog, and how the client names it (for an error that says what it cannot call). */
export type CatalogTarget = ((catalog: Catalog) => Route | undefined) & { readonly label?: string };

/** The parts of `capabilities` that lists may depend on; `elicitation: {}` is form (2025-11-25). */
function partsOf(capabilities: Readonly<Record<string, unknown>>): Part[] {
  const parts: Part[] = [];
  if (capabilities.sampling !== undefined) parts.push('sampling');
  const e = capabilities.elicitation;
  if (isObject(e)) {
    if (e.form !== undefined || e.url === undefined) parts.push('form');
    if (e.url !== undefined) parts.push('url');
  }
  if (capabilities.roots !== undefined) parts.push('roots');
  return parts;
}

/** The variant a client's capabilities read: its parts' letters in order ('' for none). */
export function capabilityKey(capabilities: Readonly<Record<string, unknown>>): string {
  return partsOf(capabilities)
    .map((p) => LETTER[p])
    .join('');
}

/** Capabilities declaring exactly `parts` (a probe's, or a -32021's requiredCapabilities). */
function declaring(parts: readonly Part[], roots: Record<string, unknown>): Record<string, unknown> {
  const capabilities: Record<string, unknown> = {};
  if (parts.includes('sampling')) capabilities.sampling = {};
  if (parts.includes('form') || parts.includes('url')) {
    capabilities.elicitation = {
      ...(parts.includes('form') ? { form: {} } : {}),
      ...(parts.includes('url') ? { url: {} } : {}),
    };
  }
  if (parts.includes('roots')) capabilities.roots = roots;
  return capabilities;
}

function partsOfKey(key: string): Part[] {
  return PARTS.filter((p) => key.includes(LETTER[p]));
}

function keyOf(parts: readonly Part[]): string {
  return PARTS.filter((p) => parts.includes(p))
    .map((p) => LETTER[p])
    .join('');
}

/**
 * What the gateway declares when it probes an upstream's lists for the shared catalog: every part, so no tool stays
 * hidden, and MCP Apps, as to a shared worker (meta-keys.ts).
 */
export const PROBE_CAPABILITIES: Record<string, unknown> = {
  ...declaring(PARTS, { listChanged: true }),
  extensions: { [UI_EXTENSION]: UI_EXTENSION_SETTINGS },
};

interface Variant {
  entry: UpstreamEntry;
  /** The shared lists' content it was probed beside: once they differ, so may it. */
  of: string;
  lists: Promise<UpstreamLists>;
  expires: number;
}

interface Composed {
  base: Catalog;
  parts: readonly UpstreamLists[];
  catalog: Catalog;
}

export interface CapabilityCatalogsOptions {
  upstreams: ReadonlyMap<string, UpstreamEntry>;
  catalogs: CatalogManager;
  log: Logger;
}

export class CapabilityCatalogs {
  /** Per upstream, per key: its lists for a client declaring that key's parts. */
  readonly #variants = new Map<string, Map<string, Variant>>();
  /** Per key: the catalog of those variants over the shared one. */
  readonly #composed = new Map<string, Composed>();
  readonly #fingerprints = new WeakMap<UpstreamLists, string>();

  constructor(private readonly options: CapabilityCatalogsOptions) {}

  /**
   * The catalog a stateless request reads. `target`: what a call names; one whose upstream does
   * not list by capabilities is answered from the shared catalog at once. A call to an entry the
   * client's variant lacks but the shared catalog has is MISSING_CLIENT_CAPABILITY (-32021),
   * naming what the client would have to declare.
   */
  catalogFor(ctx: RequestContext, base: Catalog, target?: CatalogTarget): Catalog | Promise<Catalog> {
    const sensitive = this.#sensitive();
    if (sensitive.length === 0) return base;
    const key = capabilityKey(ctx.clientCapabilities);
    if (key === capabilityKey(this.options.catalogs.probeIdentity.capabilities)) return base;
    const route = target?.(base);
    if (route && !sensitive.includes(route.upstream)) return base;
    return this.#catalog(key, base, sensitive, target);
  }

  async #catalog(
    key: string,
    base: Catalog,
    sensitive: readonly string[],
    target: CatalogTarget | undefined,
  ): Promise<Catalog> {
    const parts = await Promise.all(sensitive.map((name) => this.#lists(name, key)));
    const catalog = this.#compose(key, base, parts);
    if (!target || target(catalog)) return catalog;
    const there = target(base);
    if (!there || !sensitive.includes(there.upstream)) return catalog;
    throw await this.#missing(key, there.upstream, target);
  }

  /**
   * The typed error for an entry of `upstream` the variant `key` lacks: the first part that,
   * declared too, lists it (one that declares it can call it); else all it lacks.
   */
  async #missing(key: string, upstream: string, target: CatalogTarget): Promise<GatewayError> {
    const lacking = PARTS.filter((p) => !partsOfKey(key).includes(p));
    let parts = lacking;
    for (const part of lacking) {
      const lists = await this.#lists(upstream, keyOf([...partsOfKey(key), part]));
      if (target(this.options.catalogs.withLists(new Map([[upstream, lists]])))?.upstream !== upstream) continue;
      parts = [part];
      break;
    }
    const what = target.label ?? 'This entry';
    return new GatewayError(
      'MISSING_CLIENT_CAPABILITY',
      `${what} is offered only to clients that declare ${parts.map(describe).join(', ')}`,
      {
        requiredCapabilities: declaring(parts, {}),
      },
    );
  }

  /** Upstreams listed in the shared catalog whose lists depend on their client's capabilities. */
  #sensitive(): string[] {
    const { upstreams, catalogs } = this.options;
    const names: string[] = [];
    for (const [name, entry] of upstreams)
      if ((entry.workers.perScope || entry.workers.speaksStateless === true) && catalogs.listed(name)) names.push(name);
    return names;
  }

  /**
   * `name`'s lists for a client declaring `key`: kept, or probed now (a failed probe: the shared lists, for a few
   * seconds).
   */
  #lists(name: string, key: string): Promise<UpstreamLists> {
    const { catalogs, upstreams, log } = this.options;
    const shared = catalogs.listsOf(name);
    const entry = upstreams.get(name);
    if (!shared || !entry)
      return Promise.reject(new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${name} is not listed`));
    let byKey = this.#variants.get(name);
    if (!byKey) this.#variants.set(name, (byKey = new Map()));
    const of = this.#fingerprint(shared);
    const kept = byKey.get(key);
    if (kept && kept.entry === entry && kept.of === of && kept.expires > Date.now()) return kept.lists;
    const identity = { ...catalogs.probeIdentity, capabilities: declaring(partsOfKey(key), { listChanged: true }) };
    const variant: Variant = { entry, of, expires: Date.now() + VARIANT_TTL_MS, lists: Promise.resolve(shared) };
    variant.lists = catalogs.listsAs(name, identity).catch((err: unknown) => {
      // Not asked again by every request meanwhile (an upstream that lists only per user fails so each time).
      variant.expires = Math.min(variant.expires, Date.now() + FAILED_VARIANT_TTL_MS);
      log.debug(
        { upstream: name, capabilities: key, err: err instanceof Error ? err.message : String(err) },
        'lists for these capabilities unavailable; using the shared ones',
      );
      return shared;
    });
    byKey.set(key, variant);
    return variant.lists;
  }

  /** The catalog of `parts` over `base`, built again only when one of them (or base) changed. */
  #compose(key: string, base: Catalog, parts: readonly UpstreamLists[]): Catalog {
    const kept = this.#composed.get(key);
    if (kept && kept.base === base && kept.parts.length === parts.length && kept.parts.every((p, i) => p === parts[i]))
      return kept.catalog;
    let catalog: Catalog;
    try {
      catalog = this.options.catalogs.withLists(new Map(parts.map((p) => [p.name, p])));
    } catch (err) {
      this.options.log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "a client's lists for its capabilities collide with another upstream's; it sees the shared catalog",
      );
      return base;
    }
    this.#composed.set(key, { base, parts, catalog });
    return catalog;
  }

  #fingerprint(lists: UpstreamLists): string {
    let fingerprint = this.#fingerprints.get(lists);
    if (fingerprint === undefined) {
      fingerprint = JSON.stringify([lists.prefix, lists.uriPrefix ?? '', lists.lists]);
      this.#fingerprints.set(lists, fingerprint);
    }
    return fingerprint;
  }
}

function describe(part: Part): string {
  return part === 'form' || part === 'url' ? `elicitation.${part}` : part;
}
