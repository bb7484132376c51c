/**
 * Regular expressions an upstream wrote (its tools' schema patterns, its resource templates) run
 * by RE2 (re2-wasm) rather than V8's backtracking engine, whose time an upstream can make
 * exponential in the input (`^(a+)+$` and 43 bytes blocked the event loop for 106 s).
 *
 * RE2 is linear in pattern size times input length, but this build is slow (up to ~1 µs per
 * pattern unit and character where its DFA gives up, ~20 ns a character where it does not) and
 * lives in a fixed 16 MiB heap that aborts when full and never frees an object it is not told to.
 * So: a pattern's size is bounded before RE2 sees it (and a schema's patterns together),
 * compiled patterns are kept within a budget (least recently used dropped), a string is matched
 * only within a budget of size x length, and a heap that aborted anyway is replaced by a fresh one.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Of the units `patternUnits` counts: RE2 compiles up to this in ~0.5 s here, in ~300 KiB. */
export const MAX_PATTERN_UNITS = 2000;

/**
 * Of all the distinct patterns of one schema together: RE2 compiles them when the tool is first
 * called, on the event loop (a schema of 30 patterns of 2,000 units would take seconds).
 */
export const MAX_SCHEMA_PATTERN_UNITS = 4000;

/** A string longer than this is not copied into RE2's heap (UTF-8, up to 3 bytes a character). */
export const MAX_MATCHED_CHARS = 1 << 20;

/** Compiled patterns kept, in units (~150 bytes each): a third of the heap, the rest is for matching. */
const KEPT_UNITS = 32_000;

/** What RE2 makes of an atom, in units: UTF-8 automata for code point classes, large ones for \p{…}. */
const NEGATED_CLASS_UNITS = 8;
const SHORTHAND_UNITS = 2;
const PROPERTY_UNITS = 200;

const QUANTIFIER = /\{(\d{1,9})(?:(,)(\d{0,9}))?\}/y;

/** A pattern refused before any string is matched: RE2 cannot compile it, or it is too large to. */
export class PatternRefused extends Error {
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`pattern ${JSON.stringify(pattern)} ${reason}`);
    this.name = 'PatternRefused';
  }
}

/** Matching a string would cost more than the budget left (or the string is too long for RE2's heap). */
export class PatternTooCostly extends Error {
  constructor(
    readonly pattern: string,
    readonly length: number,
  ) {
    const what = `matching a string of ${length} characters against pattern ${JSON.stringify(pattern)}`;
    super(`${what} would cost more than the gateway allows`);
    this.name = 'PatternTooCostly';
  }
}

/**
 * An estimate of the size of RE2's program for `source` (about its instructions): each atom
 * counts, a counted repeat copies what it repeats (a range twice: RE2 nests its optional copies),
 * classes of any code point weigh more. Stops counting past `limit`.
 */
export function patternUnits(source: string, limit = MAX_PATTERN_UNITS): number {
  const groups: Array<{ total: number; last: number }> = [{ total: 0, last: 0 }];
  let open = 0;
  let i = 0;
  const atom = (units: number): void => {
    const g = groups[groups.length - 1]!;
    g.total += units;
    g.last = units;
    open += units;
  };
  while (i < source.length && open <= limit) {
    const c = source[i]!;
    const repeat = c === '{' ? repeatAt(source, i) : undefined;
    if (c === '\\') {
      const n = source[i + 1] ?? '';
      if (n === 'p' || n === 'P') {
        atom(PROPERTY_UNITS);
        const close = source[i + 2] === '{' ? source.indexOf('}', i) : -1;
        i = close === -1 ? i + 3 : close + 1;
        continue;
      }
      atom('DWS'.includes(n) ? NEGATED_CLASS_UNITS : 'dws'.includes(n) ? SHORTHAND_UNITS : 1);
      i += 2;
    } else if (c === '[') {
      i = classEnd(source, i, atom);
    } else if (c === '(') {
      groups.push({ total: 0, last: 0 });
      i++;
    } else if (c === ')' && groups.length > 1) {
      const g = groups.pop()!;
      open -= g.total;
      atom(g.total + 1);
      i++;
    } else if (repeat) {
      const g = groups[groups.length - 1]!;
      const grown = g.last * Math.max(0, repeat.copies - 1);
      g.total += grown;
      g.last += grown;
      open += grown;
      i = repeat.end;
    } else {
      atom(c === '.' ? NEGATED_CLASS_UNITS : 1);
      i++;
    }
  }
  return open;
}

/** A counted repeat at `i` (`{n}`, `{n,}`, `{n,m}`): how many copies RE2 makes, and where it ends. */
function repeatAt(source: string, i: number): { copies: number; end: number } | undefined {
  QUANTIFIER.lastIndex = i;
  const m = QUANTIFIER.exec(source);
  if (!m) return undefined;
  const lo = Number(m[1]);
  const hi = m[2] === undefined ? lo : m[3] === '' ? lo + 1 : Number(m[3]);
  return { copies: lo + 2 * Math.max(0, hi - lo), end: QUANTIFIER.lastIndex };
}

/** Past a `[…]` class from its `[`, counted as one atom. */
function classEnd(source: string, start: number, atom: (units: number) => void): number {
  let i = start + 1;
  let units = 1;
  if (source[i] === '^') {
    units = NEGATED_CLASS_UNITS;
    i++;
  }
  if (source[i] === ']') i++;
  while (i < source.length && source[i] !== ']') {
    if (source[i] === '\\') {
      const n = source[i + 1] ?? '';
      units += n === 'p' || n === 'P' ? PROPERTY_UNITS : 'dwsDWS'.includes(n) ? SHORTHAND_UNITS : 0;
      i += 2;
    } else {
      if (source.charCodeAt(i) > 0x7f) units += 1;
      i++;
    }
  }
  atom(units);
  return i + 1;
}

interface Re2Object {
  test(input: string): boolean;
  /** Its C++ object, which only this frees (re2-wasm registers no finalizer). */
  readonly wrapper: { delete(): void };
}
type Re2Constructor = new (source: string, flags: string) => Re2Object;

const load = createRequire(import.meta.url);
const RE2_ENTRY = load.resolve('re2-wasm');
const RE2_HEAP = join(dirname(RE2_ENTRY), '..', 'wasm', 're2.js');

/** RE2's heap: the compiled patterns, least recently used first, and a fresh heap once one aborts. */
class Re2Heap {
  #RE2: Re2Constructor | undefined;
  readonly #compiled = new Map<string, { re: Re2Object; units: number }>();
  #units = 0;

  /** The compiled pattern; throws PatternRefused when RE2 cannot compile it, even in a fresh heap. */
  compiled(source: string, units: number): Re2Object {
    const kept = this.#compiled.get(source);
    if (kept) {
      this.#compiled.delete(source);
      this.#compiled.set(source, kept);
      return kept.re;
    }
    while (this.#units + units > KEPT_UNITS && this.#compiled.size > 0) this.#drop(this.#compiled.keys().next().value!);
    let re: Re2Object;
    try {
      re = this.#compile(source);
    } catch (err) {
      if (!aborted(err)) throw new PatternRefused(source, reasonOf(err));
      this.#renew();
      try {
        re = this.#compile(source);
      } catch (again) {
        if (aborted(again)) this.#renew();
        throw new PatternRefused(source, aborted(again) ? 'is too large for RE2' : reasonOf(again));
      }
    }
    this.#compiled.set(source, { re, units });
    this.#units += units;
    return re;
  }

  test(source: string, units: number, input: string): boolean {
    try {
      return this.compiled(source, units).test(input);
    } catch (err) {
      if (!aborted(err)) throw err;
      // Out of heap (the matches' caches grow with their input): once more, alone in a fresh one.
      this.#renew();
      try {
        return this.compiled(source, units).test(input);
      } catch (again) {
        if (aborted(again)) this.#renew();
        throw aborted(again) ? new PatternTooCostly(source, input.length) : again;
      }
    }
  }

  #compile(source: string): Re2Object {
    this.#RE2 ??= (load(RE2_ENTRY) as { RE2: Re2Constructor }).RE2;
    // ajv's patterns are unicode (its unicodeRegExp); RE2 knows no other mode.
    return new this.#RE2(source, 'u');
  }

  #drop(source: string): void {
    const kept = this.#compiled.get(source)!;
    this.#compiled.delete(source);
    this.#units -= kept.units;
    kept.re.wrapper.delete();
  }

  /** An aborted heap is unusable: its module is dropped whole (its memory with it), a new one loaded. */
  #renew(): void {
    this.#compiled.clear();
    this.#units = 0;
    delete load.cache[RE2_ENTRY];
    delete load.cache[RE2_HEAP];
    this.#RE2 = undefined;
  }
}

/** A WebAssembly trap (RE2's abort when its heap is full, or worse): that heap is done for. */
function aborted(err: unknown): boolean {
  return err instanceof Error && err.name === 'RuntimeError';
}

function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  // "Invalid regular expression: /…/u: invalid perl operator: (?=": the pattern is said already.
  const at = message.lastIndexOf('/u: ');
  return `cannot be compiled by RE2: ${at === -1 ? message : message.slice(at + 4)}`;
}

const heap = new Re2Heap();

/** What one caller may still spend matching (pattern units x characters); see `withinBudget`. */
let budget = Infinity;

/**
 * Runs `run` (which matches strings) with at most `units` of pattern units x characters to
 * spend: past it, the match that would overspend throws PatternTooCostly. Synchronous, so no
 * other caller's matches interleave.
 */
export function withinBudget<T>(units: number, run: () => T): T {
  const outer = budget;
  budget = units;
  try {
    return run();
  } finally {
    budget = outer;
  }
}

/** The patterns of the schema being compiled (see `compilingSchema`), and the units they may still take. */
let schema: { patterns: Set<string>; unitsLeft: number } | undefined;

/** Runs `compile` (ajv compiling one schema) with its patterns bounded together by MAX_SCHEMA_PATTERN_UNITS. */
export function compilingSchema<T>(compile: () => T): T {
  const outer = schema;
  schema = { patterns: new Set(), unitsLeft: MAX_SCHEMA_PATTERN_UNITS };
  try {
    return compile();
  } finally {
    schema = outer;
  }
}

/** A pattern compiled by RE2, as ajv and the catalog use it. */
export class LinearPattern {
  private constructor(
    readonly source: string,
    readonly units: number,
  ) {}

  /** Compiled now (so a refusal comes at once); throws PatternRefused. */
  static compile(source: string): LinearPattern {
    const pattern = LinearPattern.lazy(source);
    if (schema && !schema.patterns.has(source)) {
      schema.patterns.add(source);
      schema.unitsLeft -= pattern.units;
      if (schema.unitsLeft < 0) {
        throw new PatternRefused(
          source,
          `and the schema's other patterns exceed ${MAX_SCHEMA_PATTERN_UNITS} units together`,
        );
      }
    }
    heap.compiled(source, pattern.units);
    return pattern;
  }

  /** Compiled by its first match (which may throw PatternRefused); throws PatternRefused if too large. */
  static lazy(source: string): LinearPattern {
    const units = patternUnits(source);
    if (units > MAX_PATTERN_UNITS) {
      const why = `is larger than the gateway compiles (over ${MAX_PATTERN_UNITS} units, counted repeats expanded)`;
      throw new PatternRefused(source, why);
    }
    return new LinearPattern(source, units);
  }

  /** Throws PatternTooCostly when the match would cost more than the budget left. */
  test(input: string): boolean {
    const cost = this.units * input.length;
    if (cost > budget || input.length > MAX_MATCHED_CHARS) throw new PatternTooCostly(this.source, input.length);
    budget -= cost;
    return heap.test(this.source, this.units, input);
  }

  /** ajv keeps one per distinct pattern of a schema, by this. */
  toString(): string {
    return `/${this.source}/u`;
  }
}

/** ajv's `code.regExp`: every pattern of an upstream's schema goes through RE2. */
export const linearRegExp = Object.assign((source: string): LinearPattern => LinearPattern.compile(source), {
  code: 'linearRegExp',
});
