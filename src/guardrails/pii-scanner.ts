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
    for (let i = lastDot + 1; i < end; i++) if (!/[A-Za-z]/.test(text[i]!)) tld = false;
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
    const lead = text[i] === '+' || text[i] === '(';
    if (!(isDigit(text, i) || (lead && isDigit(text, i + 1))) || !boundaryBefore(text, i)) {
      i++;
      continue;
    }
    const start = i;
    const digits: number[] = [];
    let j = lead ? i + 1 : i;
    let end = j;
    while (j < text.length && digits.length <= 20) {
      if (isDigit(text, j)) {
        digits.push(text.charCodeAt(j) - 48);
        end = ++j;
      } else if (isSeparator(text.charCodeAt(j))) {
        // `) ` is one separator: (555) 123-4567.
        const step = text.charCodeAt(j) === 41 && text.charCodeAt(j + 1) === 32 ? 2 : 1;
        if (!isDigit(text, j + step)) break;
        j += step;
      } else break;
    }
    // A run longer than any card or phone: skip all of it, not digit by digit.
    while (end < text.length && isDigit(text, end)) end++;
    if (boundaryAfter(text, end)) {
      const kind = classify(text, start, end, digits);
      if (kind) found.push({ start, end, kind });
    }
    i = Math.max(end, i + 1);
  }
}

/** Space, `-`, `.` or `)`. */
function isSeparator(c: number): boolean {
  return c === 32 || c === 45 || c === 46 || c === 41;
}

function classify(text: string, start: number, end: number, digits: number[]): string | undefined {
  const n = digits.length;
  const separated = end - start > n;
  if (text[start] !== '+' && text[start] !== '(' && n >= 13 && n <= 19 && digits[0]! >= 2 && digits[0]! <= 6)
    if (luhn(digits)) return 'card-number';
  if (text[start] === '+' && n >= 8 && n <= 15) return 'phone';
  // North American: 3-3-4 digits with separators ((555) 123-4567, 555-123-4567, 555.123.4567).
  if (n === 10 && separated && /^\(?\d{3}\)?[ .-]?\d{3}[ .-]\d{4}$/.test(text.slice(start, end))) return 'phone';
  return undefined;
}

function luhn(digits: readonly number[]): boolean {
  let sum = 0;
  for (let k = 0; k < digits.length; k++) {
    let d = digits[digits.length - 1 - k]!;
    if (k % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Two letters, two check digits, 11 to 30 letters or digits (groups of four may be spaced). */
const positions = new Int32Array(35);

function ibans(text: string, found: Finding[]): void {
  let i = 0;
  while (i < text.length - 15) {
    if (!(isUpper(text, i) && isUpper(text, i + 1) && isDigit(text, i + 2) && isDigit(text, i + 3))) {
      i++;
      continue;
    }
    if (!boundaryBefore(text, i)) {
      i++;
      continue;
    }
    // The positions of its letters and digits (spaces between groups of four skipped).
    let n = 0;
    let j = i;
    let end = i;
    while (j < text.length && n <= 34) {
      if (isUpper(text, j) || isDigit(text, j)) {
        positions[n++] = j;
        end = ++j;
      } else if (text[j] === ' ' && n >= 4 && n % 4 === 0) j++;
      else break;
    }
    if (n >= 15 && n <= 34 && boundaryAfter(text, end) && mod97(text, positions, n) === 1) {
      found.push({ start: i, end, kind: 'iban' });
      i = end;
    } else i++;
  }
}

/** The IBAN check: the first four characters moved to the end, letters as 10..35, modulo 97. */
function mod97(text: string, positions: Int32Array, n: number): number {
  let rest = 0;
  for (let k = 0; k < n; k++) {
    const c = text.charCodeAt(positions[(k + 4) % n]!);
    const v = c >= 65 ? c - 55 : c - 48;
    rest = v >= 10 ? (rest * 100 + v) % 97 : (rest * 10 + v) % 97;
  }
  return rest;
}
