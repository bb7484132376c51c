// Character tests the scanners share: table lookups on char codes, no regular expression, so that
// every scanner's work per character is a constant.

/** One finding in a string: [start, end) and its kind (a stable, short name: it becomes a metric label). */
export interface Finding {
  start: number;
  end: number;
  kind: string;
}

/** A lookup table of ASCII characters: 1 for each of `chars`. */
export function table(chars: string): Uint8Array {
  const t = new Uint8Array(128);
  for (const c of chars) t[c.charCodeAt(0)] = 1;
  return t;
}

const DIGITS = '0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';

export const UPPER_ALNUM = table(UPPER + DIGITS);
export const ALNUM = table(UPPER + LOWER + DIGITS);
/** What a word is made of, for word boundaries: letters, digits and `_`. */
export const WORD = table(UPPER + LOWER + DIGITS + '_');
/** base64url, JWT segments, most vendors' token bodies. */
export const TOKEN = table(UPPER + LOWER + DIGITS + '_-');
/** A value after `key=`: tokens plus base64's `+ / =` and dots. */
export const VALUE = table(UPPER + LOWER + DIGITS + '_-+/=.');
export const EMAIL_LOCAL = table(UPPER + LOWER + DIGITS + '._%+-');
export const DOMAIN = table(UPPER + LOWER + DIGITS + '.-');
export const SCHEME = table(LOWER + UPPER + DIGITS + '+.-');

export function inClass(t: Uint8Array, text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c < 128 && t[c] === 1;
}

export function isDigit(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 48 && c <= 57;
}

export function isUpper(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 65 && c <= 90;
}

/** The end of the run of `t` characters from `i`, looking at most `max` characters ahead. */
export function runEnd(t: Uint8Array, text: string, i: number, max: number): number {
  const stop = Math.min(text.length, i + max);
  let j = i;
  while (j < stop && inClass(t, text, j)) j++;
  return j;
}

/** Whether position `i` starts (or, for `before`, ends) a word: no word character next to it. */
export function boundaryBefore(text: string, i: number): boolean {
  return i === 0 || !inClass(WORD, text, i - 1);
}

export function boundaryAfter(text: string, i: number): boolean {
  return i >= text.length || !inClass(WORD, text, i);
}

const counts = new Uint32Array(128);

/** Shannon entropy in bits per character (of the ASCII characters; the values it is asked about are ASCII). */
export function entropy(text: string, start: number, end: number): number {
  counts.fill(0);
  for (let i = start; i < end; i++) counts[text.charCodeAt(i) & 127]!++;
  const n = end - start;
  let bits = 0;
  for (const k of counts) if (k > 0) bits -= (k / n) * Math.log2(k / n);
  return bits;
}

/**
 * Runs of one character class, each measured once however many starts fall inside it: where a
 * run from `i` ends, looking at most `max` ahead. A start inside the run last measured reuses
 * where it stopped (at the run's end, or at the last look-ahead bound, from which it goes on).
 * Without it, a text of repeated prefixes (`xoxb-xoxb-…`) is measured 255 characters per prefix.
 */
export class RunMeter {
  #from = -1;
  #stop = -1;
  #ended = false;

  constructor(private readonly t: Uint8Array) {}

  end(text: string, i: number, max: number): number {
    const limit = Math.min(text.length, i + max);
    if (i < this.#from || i > this.#stop) {
      this.#from = i;
      this.#stop = i;
      this.#ended = false;
    }
    if (this.#ended) return Math.min(this.#stop, limit);
    let j = this.#stop;
    while (j < limit && inClass(this.t, text, j)) j++;
    this.#stop = j;
    this.#ended = j < limit || j === text.length;
    return j;
  }
}
