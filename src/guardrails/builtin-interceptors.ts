// The built-in interceptors (config `interceptors: [{ name: secrets | pii | size, ... }]`): each
// looks at the strings of one message (a call's arguments, or a result) and says what it found
// and, as a mutator, what the message becomes. Never the matched text: a finding is its kind.
import type { InterceptorConfig } from '../config/interceptors.js';
import type { Finding } from './char-classes.js';
import { findPii } from './pii-scanner.js';
import { findSecrets } from './secrets-scanner.js';

export type Phase = 'request' | 'response';

/**
 * How an interceptor's run ended; `would-*`: in audit mode, what `on` would have done; `mutated`: an
 * interceptor server's mutator replaced the message; `error`: a server failed and its onError was allow.
 */
export type Verdict =
  | 'pass'
  | 'redacted'
  | 'truncated'
  | 'blocked'
  | 'mutated'
  | 'error'
  | 'would-redact'
  | 'would-truncate'
  | 'would-block'
  | 'would-mutate';

export interface Outcome {
  verdict: Verdict;
  /** The message as it goes on (the same object when nothing changed). */
  value: unknown;
  /** The kinds found (`aws-access-key`, `email`, `size`), each once. */
  kinds: string[];
}

/** The request a run is part of, for interceptors that see more than one message's strings. */
export interface RunFacts {
  method: string;
  principal?: string | undefined;
  requestId?: string | undefined;
}

export interface Interceptor {
  readonly name: string;
  /**
   * What it is given in the request phase: a call's `arguments` (the built-ins) or its whole `params`
   * (an interceptor server: the draft's payload is the request's params).
   */
  readonly takes?: 'arguments' | 'params';
  /** The methods it runs on; absent: every guarded one. */
  readonly events?: ReadonlySet<string>;
  run(value: unknown, phase: Phase, facts: RunFacts): Outcome | Promise<Outcome>;
}

/** Deeper than this, a result is not walked: it is redacted whole (a guard cannot skip what it cannot read). */
const MAX_DEPTH = 64;
/** Keys whose values are protocol, not content: never rewritten. */
const STRUCTURAL = new Set(['_meta', 'type', 'mimeType', 'uri', 'blob']);

export function builtinInterceptor(config: InterceptorConfig): Interceptor {
  if (config.name === 'size') return new SizeInterceptor(config);
  const scan = config.name === 'secrets' ? findSecrets : findPii;
  return new ScanningInterceptor(config, scan);
}

class ScanningInterceptor implements Interceptor {
  readonly name: string;
  readonly #allow: ReadonlySet<string>;

  constructor(
    private readonly config: InterceptorConfig,
    private readonly scan: (text: string) => Finding[],
  ) {
    this.name = config.name;
    this.#allow = new Set(config.allowFields ?? []);
  }

  run(value: unknown): Outcome {
    const kinds = new Set<string>();
    const redact = this.config.action !== 'block' && this.config.mode === 'on';
    const out = mapStrings(value, this.#allow, 0, (text) => {
      const found = this.scan(text);
      if (found.length === 0) return undefined;
      for (const f of found) kinds.add(f.kind);
      return redact ? redacted(text, found) : undefined;
    });
    if (kinds.size === 0) return { verdict: 'pass', value, kinds: [] };
    const block = this.config.action === 'block';
    const audit = this.config.mode === 'audit';
    const verdict: Verdict = block ? (audit ? 'would-block' : 'blocked') : audit ? 'would-redact' : 'redacted';
    return { verdict, value: redact ? out : value, kinds: [...kinds].sort() };
  }
}

/** Each finding replaced by a marker naming its kind; overlapping findings become one. */
function redacted(text: string, found: Finding[]): string {
  found.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (let k = 0; k < found.length; k++) {
    const f = found[k]!;
    if (f.end <= at) continue;
    let end = f.end;
    while (k + 1 < found.length && found[k + 1]!.start < end) end = Math.max(end, found[++k]!.end);
    out += text.slice(at, Math.max(at, f.start)) + `[REDACTED:${f.kind}]`;
    at = end;
  }
  return out + text.slice(at);
}

/** `size`: a result's text over `maxBytes` (UTF-8) is cut, with a marker saying how much was left out. */
class SizeInterceptor implements Interceptor {
  readonly name = 'size';

  constructor(private readonly config: InterceptorConfig) {}

  run(value: unknown): Outcome {
    const max = this.config.maxBytes ?? Infinity;
    let budget = max;
    let cut = 0;
    const out = mapStrings(value, new Set(), 0, (text) => {
      const bytes = Buffer.byteLength(text);
      if (bytes <= budget) {
        budget -= bytes;
        return undefined;
      }
      const kept = Buffer.from(text)
        .subarray(0, budget)
        .toString()
        .replace(/\uFFFD+$/, '');
      cut += bytes - Buffer.byteLength(kept);
      budget = 0;
      return `${kept}[TRUNCATED:${bytes - Buffer.byteLength(kept)} bytes]`;
    });
    if (cut === 0) return { verdict: 'pass', value, kinds: [] };
    const on = this.config.mode === 'on';
    if (this.config.action === 'block') return { verdict: on ? 'blocked' : 'would-block', value, kinds: ['size'] };
    return { verdict: on ? 'truncated' : 'would-truncate', value: on ? out : value, kinds: ['size'] };
  }
}

/**
 * `value` with each string `fn` rewrites replaced (copied along the way; the same object where
 * nothing changed), skipping structural keys, allowed fields and the bytes of images and audio.
 */
function mapStrings(
  value: unknown,
  allow: ReadonlySet<string>,
  depth: number,
  fn: (text: string) => string | undefined,
): unknown {
  if (typeof value === 'string') return fn(value) ?? value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return fn(JSON.stringify(value)) ?? value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = mapStrings(value[i], allow, depth + 1, fn);
      if (v !== value[i]) (copy ??= value.slice())[i] = v;
    }
    return copy ?? value;
  }
  const obj = value as Record<string, unknown>;
  const binary = obj.type === 'image' || obj.type === 'audio';
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    if (STRUCTURAL.has(key) || allow.has(key) || (binary && key === 'data')) continue;
    const v = mapStrings(obj[key], allow, depth + 1, fn);
    if (v !== obj[key]) (copy ??= { ...obj })[key] = v;
  }
  return copy ?? value;
}
