// Decisions a policy set has made, kept so a repeated request does not cross into the WASM
// evaluator again (a decision there costs about 0.2 ms of CPU with 20 rules). A decision is kept
// by a key made of exactly what the set's policies can read of a request (policy-reads.ts): the
// action, the resource's and the principal's uids and the attributes of them that are read, the
// principal's tags (claims) that are read, the context attributes read, the arguments' tags that
// are read. Cedar
// is deterministic, so the same key gives the same decision. A set that reads the context's
// `epoch` (it changes every second) or the context as a whole keeps nothing. At most `capacity`
// entries, in two generations of half as many: new and used entries go into the young one; when
// it is full it becomes the old one and the old one is dropped, so what was not used for a
// generation goes first (least recently used, roughly, at one Map lookup per hit: a Map's delete
// and set per hit, as an exact LRU does, cost more than the rest of a hit). A key longer than
// MAX_KEY_CHARS (long claims or arguments that are read) is kept as its SHA-256, so no entry holds
// unbounded data of a caller's.
import { createHash } from 'node:crypto';
import type { PolicyReads } from './policy-reads.js';
import type { Decision, PolicyRequest } from './policy-set.js';

/** The longest key kept as it is; a longer one is hashed. */
export const MAX_KEY_CHARS = 512;

/** The context attributes a key may hold: each has a few values, or changes once an hour at most. */
const KEYED_CONTEXT = ['method', 'era', 'transport', 'hour', 'weekday'] as const;

type Tags = Readonly<Record<string, string>>;

export interface CacheStats {
  entries: number;
  hits: number;
  misses: number;
}

export class DecisionCache {
  /** Entries made or used since the last turn; at `#half` it becomes #old. */
  #young = new Map<string, Decision>();
  /** The generation before: dropped at the next turn but for what is used (moved to #young) meanwhile. */
  #old = new Map<string, Decision>();
  readonly #half: number;
  readonly #context: ReadonlyArray<(typeof KEYED_CONTEXT)[number]>;
  readonly #reads: PolicyReads;
  /** The attribute names read (on any entity): the resource's are in the key by these. */
  readonly #attrs: readonly string[];
  #hits = 0;
  #misses = 0;

  private constructor(reads: PolicyReads, capacity: number) {
    this.#half = Math.ceil(capacity / 2);
    this.#reads = reads;
    this.#attrs = [...reads.attrs];
    const context = reads.context as ReadonlySet<string>;
    this.#context = KEYED_CONTEXT.filter((name) => context.has(name));
  }

  /** The cache for a set that reads `reads`; undefined when none may be kept (or capacity is 0). */
  static for(reads: PolicyReads, capacity: number): DecisionCache | undefined {
    if (capacity <= 0 || reads.context === 'all') return undefined;
    // `arguments` is read through its tags (in the key); anything else (epoch) changes too often.
    const keyed: readonly string[] = [...KEYED_CONTEXT, 'arguments'];
    if ([...reads.context].some((name) => !keyed.includes(name))) return undefined;
    return new DecisionCache(reads, capacity);
  }

  get stats(): CacheStats {
    return { entries: this.#young.size + this.#old.size, hits: this.#hits, misses: this.#misses };
  }

  /** The key of `request` decided with `args`: what the policies can read of it, nothing else. */
  key(request: PolicyRequest, args: Tags): string {
    const { attrs } = this.#reads;
    const p = request.principal;
    const { resource } = request;
    const principal =
      p.kind === 'client'
        ? [
            p.id,
            attrs.has('name') ? p.name : 0,
            attrs.has('scopes') ? p.scopes : 0,
            attrs.has('address') ? p.address : 0,
            this.#tags(p.claims),
          ]
        : p.address;
    const context = this.#context.map((name) => request.context[name]);
    const key = JSON.stringify([
      request.action,
      resource.type,
      resource.id,
      this.#attrs.map((name) => (Object.hasOwn(resource.attrs, name) ? resource.attrs[name] : null)),
      p.kind,
      principal,
      context,
      this.#tags(args),
    ]);
    return key.length <= MAX_KEY_CHARS ? key : `sha256:${createHash('sha256').update(key).digest('base64')}`;
  }

  /** The tags the policies can read: each read key's value or null (absent); all of them when a key is computed. */
  #tags(tags: Tags): unknown {
    const read = this.#reads.tags;
    if (read === 'all') return tags;
    const values: Array<string | null> = [];
    for (const key of read) values.push(Object.hasOwn(tags, key) ? tags[key]! : null);
    return values;
  }

  get(key: string): Decision | undefined {
    let decision = this.#young.get(key);
    if (decision === undefined) {
      decision = this.#old.get(key);
      if (decision === undefined) {
        this.#misses++;
        return undefined;
      }
      this.#old.delete(key);
      this.#keep(key, decision);
    }
    this.#hits++;
    return decision;
  }

  set(key: string, decision: Decision): void {
    this.#keep(key, Object.freeze({ ...decision, policies: Object.freeze([...decision.policies]) }));
  }

  #keep(key: string, decision: Decision): void {
    this.#young.set(key, decision);
    if (this.#young.size < this.#half) return;
    this.#old = this.#young;
    this.#young = new Map();
  }
}
