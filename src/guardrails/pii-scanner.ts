// The `pii` interceptor's detectors: e-mail addresses, phone numbers (international `+…`, and
// North American `(555) 123-4567` with separators), payment card numbers (13 to 19 digits,
// Luhn-checked, issuer digit 2 to 6) and IBANs (mod-97 checked). Hand-written scanners: each
// looks at most a bounded distance from an anchor character, or consumes a run once.
import {
  DOMAIN,
  EMAIL_LOCAL,
  boundaryAfter,
  boundaryBefore,
  inClass,
  isDigit,
  isUpper,
  type Finding,
} from './char-classes.js';

export function findPii(text: string): Finding[] {
  const found: Finding[] = [];
  emails(text, found);
  digitRuns(text, found);
  ibans(text, found);
  return found;
}

function emails(text: string, found: Finding[]): void {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && inClass(EMAIL_LOCAL, text, start - 1)) start--;
    if (start === at) continue;
    let end = at + 1;
    let lastDot = -1;
    while (end < text.length && end - at <= 253 && inClass(DOMAIN, text, end)) {
      if (text[end] === '.') lastDot = end;
      end++;
    }
    while (end > at + 1 && (text[end - 1] === '.' || text[end - 1] === '-')) end--;
    if (lastDot === -1 || lastDot >= end - 2 || lastDot === at + 1) continue;
    let tld = true;
    for (let i = lastDot + 1; i < end && tld; i++) tld = isLetter(text.charCodeAt(i));
    if (tld) found.push({ start, end, kind: 'email' });
  }
}

/**
 * Digits with single separators between them (`4111 1111-1111 1111`, `+44 20 7946 0958`), each
 * run taken once: a card if 13 to 19 digits pass Luhn, a phone if it has the shape of one.
 */
function digitRuns(text: string, found: Finding[]): void {
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const lead = c === 43 || c === 40; // + (
    if (!((c >= 48 && c <= 57) || (lead && isDigit(text, i + 1))) || !boundaryBefore(text, i)) {
      i++;
      continue;
    }
    const start = i;
    let n = 0;
    let j = lead ? i + 1 : i;
    let end = j;
    while (j < text.length && n <= 20) {
      const d = text.charCodeAt(j);
      if (d >= 48 && d <= 57) {
        digits[n++] = d - 48;
        end = ++j;
      } else if (isSeparator(d)) {
        // `) ` is one separator: (555) 123-4567.
        const step = d === 41 && text.charCodeAt(j + 1) === 32 ? 2 : 1;
        if (!isDigit(text, j + step)) break;
        j += step;
      } else break;
    }
    // A run longer than any card or phone: skip all of it, not digit by digit.
    while (end < text.length && isDigit(text, end)) end++;
    if (boundaryAfter(text, end)) {
      const kind = classify(text, start, end, n);
      if (kind) found.push({ start, end, kind });
    }
    i = Math.max(end, i + 1);
  }
}

/** The digits of the run digitRuns is reading (at most 21 are read). */
const digits = new Uint8Array(21);

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Space, `-`, `.` or `)`. */
function isSeparator(c: number): boolean {
  return c === 32 || c === 45 || c === 46 || c === 41;
}

function classify(text: string, start: number, end: number, n: number): string | undefined {
  const separated = end - start > n;
  const first = text.charCodeAt(start);
  if (first !== 43 && first !== 40 && n >= 13 && n <= 19 && digits[0]! >= 2 && digits[0]! <= 6)
    if (luhn(n)) return 'card-number';
  if (first === 43 && n >= 8 && n <= 15) return 'phone';
  // North American: 3-3-4 digits with separators ((555) 123-4567, 555-123-4567, 555.123.4567).
  if (n === 10 && separated && /^\(?\d{3}\)?[ .-]?\d{3}[ .-]\d{4}$/.test(text.slice(start, end))) return 'phone';
  return undefined;
}

function luhn(n: number): boolean {
  let sum = 0;
  for (let k = 0; k < n; k++) {
    let d = digits[n - 1 - k]!;
    if (k % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * Two letters, two check digits, 11 to 30 letters or digits in all (groups of four may be spaced).
 * Taken a chain at a time: capitals and digits in tokens joined by spaces, every token but
 * the last a multiple of four long. Where the walk from a token ends does not depend on which token
 * of the chain it started at, so the chain is walked once, and only its last few tokens (those
 * within 34 characters of its end) can start an IBAN: "GB82 GB82 …" costs one pass, not one walk
 * of up to 34 characters per token.
 */
const TAIL = 16; // more tokens than fit in 34 characters when all but the last are at least 4 long
const tokenStarts = new Int32Array(TAIL);
const tokenBefore = new Int32Array(TAIL);
const positions = new Int32Array(35);

function ibans(text: string, found: Finding[]): void {
  let i = 0;
  while (i < text.length) {
    if (!isUpperOrDigit(text, i) || !boundaryBefore(text, i)) {
      i++;
      continue;
    }
    // The chain from i: each token's start and how many characters came before it.
    let tokens = 0;
    let count = 0;
    let j = i;
    for (;;) {
      tokenStarts[tokens % TAIL] = j;
      tokenBefore[tokens % TAIL] = count;
      tokens++;
      const from = j;
      while (j < text.length && isUpperOrDigit(text, j)) j++;
      count += j - from;
      // Spaces after a group of four (or eight…) go on to the next group.
      let next = j;
      while (text.charCodeAt(next) === 32) next++;
      if (next > j && (j - from) % 4 === 0 && isUpperOrDigit(text, next)) j = next;
      else break;
    }
    if (boundaryAfter(text, j)) {
      for (let k = Math.max(0, tokens - TAIL); k < tokens; k++) {
        const start = tokenStarts[k % TAIL]!;
        const n = count - tokenBefore[k % TAIL]!;
        if (n > 34) continue;
        if (n < 15) break;
        if (isIbanStart(text, start) && mod97(text, start, j, n) === 1) {
          found.push({ start, end: j, kind: 'iban' });
          break;
        }
      }
    }
    i = j + 1;
  }
}

function isUpperOrDigit(text: string, i: number): boolean {
  return isUpper(text, i) || isDigit(text, i);
}

function isIbanStart(text: string, i: number): boolean {
  return isUpper(text, i) && isUpper(text, i + 1) && isDigit(text, i + 2) && isDigit(text, i + 3);
}

/** The IBAN check of its `n` letters and digits in [start, end): the first four moved last, letters 10..35, mod 97. */
function mod97(text: string, start: number, end: number, n: number): number {
  let m = 0;
  for (let j = start; j < end; j++) if (text.charCodeAt(j) !== 32) positions[m++] = j;
  let rest = 0;
  for (let k = 0; k < n; k++) {
    const c = text.charCodeAt(positions[(k + 4) % n]!);
    const v = c >= 65 ? c - 55 : c - 48;
    rest = v >= 10 ? (rest * 100 + v) % 97 : (rest * 10 + v) % 97;
  }
  return rest;
}
