// The `secrets` interceptor's detectors: credentials by their published formats (AWS access keys,
// GitHub, GitLab, Slack, Stripe and Google API tokens, PEM private keys, JWTs), passwords inside
// connection strings, and high-entropy values assigned to a secret-sounding key. The kinds follow
// those gitleaks covers (MIT; its rules were read, not vendored: they are RE2 patterns, and RE2
// here (re2-wasm) costs ~430 µs per 4 KB per pattern). Each detector finds an anchor (a word
// start, a fixed marker with indexOf, an operator) and then does bounded work, or scans a run once
// and skips past it: linear in the text, whatever the text is.
import {
  ALNUM,
  SCHEME,
  TOKEN,
  UPPER_ALNUM,
  VALUE,
  boundaryAfter,
  boundaryBefore,
  entropy,
  inClass,
  RunMeter,
  runEnd,
  table,
  WORD,
  type Finding,
} from './char-classes.js';

/** A token after a fixed prefix: its body's characters and length bounds. */
interface PrefixedToken {
  kind: string;
  prefixes: readonly string[];
  body: Uint8Array;
  min: number;
  max: number;
}

const PREFIXED: readonly PrefixedToken[] = [
  { kind: 'aws-access-key', prefixes: ['AKIA', 'ASIA', 'ABIA', 'ACCA'], body: UPPER_ALNUM, min: 16, max: 16 },
  { kind: 'github-token', prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], body: ALNUM, min: 36, max: 255 },
  { kind: 'github-token', prefixes: ['github_pat_'], body: TOKEN, min: 22, max: 255 },
  { kind: 'gitlab-token', prefixes: ['glpat-', 'gldt-', 'glrt-', 'glptt-'], body: TOKEN, min: 20, max: 255 },
  {
    kind: 'slack-token',
    prefixes: ['xoxb-', 'xoxp-', 'xoxa-', 'xoxr-', 'xoxs-', 'xoxe-', 'xapp-'],
    body: TOKEN,
    min: 10,
    max: 255,
  },
  { kind: 'stripe-key', prefixes: ['sk_live_', 'rk_live_', 'sk_test_', 'rk_test_'], body: ALNUM, min: 16, max: 255 },
  { kind: 'google-api-key', prefixes: ['AIza'], body: TOKEN, min: 35, max: 35 },
];

/** Key names whose value, if it looks random enough, is taken for a secret (matched lower-cased). */
const SECRET_KEYS = [
  'password',
  'passwd',
  'secret',
  'token',
  'api_key',
  'apikey',
  'api-key',
  'access_key',
  'private_key',
  'credential',
];
/** Below this (bits per character) a value is a word or a placeholder, not a key. */
const MIN_ENTROPY = 3.5;

export function findSecrets(text: string): Finding[] {
  const found: Finding[] = [];
  prefixed(text, found);
  privateKeys(text, found);
  jwts(text, found);
  connectionPasswords(text, found);
  assignedSecrets(text, found);
  return found;
}

/** Each prefix under its first two characters (all of them word characters). */
const BY_START: ReadonlyMap<number, ReadonlyArray<{ prefix: string; rule: number }>> = (() => {
  const map = new Map<number, Array<{ prefix: string; rule: number }>>();
  PREFIXED.forEach((r, rule) => {
    for (const prefix of r.prefixes) {
      const key = prefix.charCodeAt(0) * 128 + prefix.charCodeAt(1);
      map.set(key, [...(map.get(key) ?? []), { prefix, rule }]);
    }
  });
  return map;
})();

/**
 * The tokens of PREFIXED in one pass: a token starts a word (a boundary before it), so only word
 * starts are tried, each against the prefixes of its first two characters. (An indexOf per prefix
 * read the text 26 times, and a text dense in a prefix's first letter made each of those slow.) A
 * token's body is measured once however many prefixes fall inside it (one RunMeter per rule).
 */
function prefixed(text: string, found: Finding[]): void {
  const meters = PREFIXED.map((r) => new RunMeter(r.body));
  const covered = PREFIXED.map(() => -1);
  const n = text.length;
  let i = 0;
  for (;;) {
    while (i < n && !inClass(WORD, text, i)) i++;
    if (i >= n) return;
    const candidates = BY_START.get(text.charCodeAt(i) * 128 + text.charCodeAt(i + 1));
    if (candidates) {
      for (let k = 0; k < candidates.length; k++) {
        const { prefix, rule } = candidates[k]!;
        // Inside a token of this rule already found: nothing new.
        if (i < covered[rule]! || !startsAt(text, i, prefix)) continue;
        const r = PREFIXED[rule]!;
        const bodyStart = i + prefix.length;
        const end = meters[rule]!.end(text, bodyStart, r.max + 1);
        const length = end - bodyStart;
        if (length >= r.min && length <= r.max && boundaryAfter(text, end)) {
          found.push({ start: i, end, kind: r.kind });
          covered[rule] = end;
        }
      }
    }
    // No other word start before this word ends.
    i++;
    while (i < n && inClass(WORD, text, i)) i++;
  }
}

/** Whether `prefix` is at `i` (its first two characters already matched: BY_START). */
function startsAt(text: string, i: number, prefix: string): boolean {
  for (let k = 2; k < prefix.length; k++) if (text.charCodeAt(i + k) !== prefix.charCodeAt(k)) return false;
  return true;
}

/** A PEM block: from its BEGIN line to its END line, the whole block. */
function privateKeys(text: string, found: Finding[]): void {
  let from = 0;
  for (;;) {
    const begin = text.indexOf('-----BEGIN ', from);
    if (begin === -1) return;
    const close = text.indexOf('-----', begin + 11);
    if (close === -1) return;
    // Bounded before it is sliced: a far `-----` must not make every BEGIN copy the text up to it.
    if (close - begin - 11 > 40 || !text.slice(begin + 11, close).endsWith('PRIVATE KEY')) {
      from = begin + 11;
      continue;
    }
    const endMarker = text.indexOf('-----END ', close + 5);
    // No END after this BEGIN: none after any later one either.
    if (endMarker === -1) return;
    const endClose = text.indexOf('-----', endMarker + 9);
    const end = endClose === -1 ? text.length : endClose + 5;
    found.push({ start: begin, end, kind: 'private-key' });
    from = end;
  }
}

/** header.payload.signature, both JSON parts starting `{"` (base64url `eyJ`). */
function jwts(text: string, found: Finding[]): void {
  let from = 0;
  for (;;) {
    const at = text.indexOf('eyJ', from);
    if (at === -1) return;
    const headerEnd = runEnd(TOKEN, text, at, Infinity);
    // A start inside this run shares its tail: if this one fails, so would they.
    from = headerEnd;
    if (!boundaryBefore(text, at) || text[headerEnd] !== '.' || !text.startsWith('eyJ', headerEnd + 1)) continue;
    const payloadEnd = runEnd(TOKEN, text, headerEnd + 1, Infinity);
    if (text[payloadEnd] !== '.') continue;
    const end = runEnd(TOKEN, text, payloadEnd + 1, Infinity);
    if (end - payloadEnd - 1 >= 10 && headerEnd - at >= 10) {
      found.push({ start: at, end, kind: 'jwt' });
      from = end;
    }
  }
}

/** `scheme://user:password@host`: the password. */
function connectionPasswords(text: string, found: Finding[]): void {
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 3)) {
    let s = at;
    while (s > 0 && at - s < 32 && inClass(SCHEME, text, s - 1)) s--;
    if (s === at) continue;
    const limit = Math.min(text.length, at + 3 + 512);
    let colon = -1;
    let i = at + 3;
    for (; i < limit; i++) {
      const c = text[i]!;
      if (c === '@' || c === '/' || c === ' ' || c === '\n' || c === '\t' || c === '"' || c === "'") break;
      if (c === ':' && colon === -1) colon = i;
    }
    if (text[i] === '@' && colon !== -1 && i - colon > 1)
      found.push({ start: colon + 1, end: i, kind: 'connection-password' });
  }
}

/**
 * `password = "k8J…"`, `"api_key": "…"`: a random-looking value right after a secret key's name.
 * Found from the operators (`:`, `=`), each looking back a bounded distance for a key's name: one
 * read of the text for each operator character, no lower-cased copy of it, and no search per key
 * name (which a text dense in a name's first letter made slow).
 */
function assignedSecrets(text: string, found: Finding[]): void {
  const values = new RunMeter(VALUE);
  let covered = -1;
  let colon = text.indexOf(':');
  let equals = text.indexOf('=');
  while (colon !== -1 || equals !== -1) {
    let op: number;
    if (equals === -1 || (colon !== -1 && colon < equals)) {
      op = colon;
      colon = text.indexOf(':', op + 1);
    } else {
      op = equals;
      equals = text.indexOf('=', op + 1);
    }
    if (!keyBefore(text, op)) continue;
    const i = skip(text, op + 1, OPERATOR_TAIL, 4);
    const end = values.end(text, i, 257);
    const length = end - i;
    // One finding per value: further keys inside a value already found add nothing.
    if (i < covered || length < 10 || length > 256 || entropy(text, i, end) < MIN_ENTROPY) continue;
    found.push({ start: i, end, kind: 'assigned-secret' });
    covered = end;
  }
}

/** What may follow a key's name before its operator: the rest of the name (`password_hash`), at most this long. */
const NAME_REST = 24;
const LONGEST_KEY = Math.max(...SECRET_KEYS.map((k) => k.length));

/**
 * Whether a secret key's name (any case) ends at most NAME_REST name characters before the
 * operator at `op`, with at most three quotes or spaces between them (`"api_key": `, `password =`).
 */
function keyBefore(text: string, op: number): boolean {
  let end = op;
  while (end > 0 && op - end < 3 && inClass(QUOTE_SPACE, text, end - 1)) end--;
  let start = end;
  while (start > 0 && end - start < NAME_REST + LONGEST_KEY && inClass(TOKEN, text, start - 1)) start--;
  for (const key of SECRET_KEYS)
    for (let at = Math.max(start, end - NAME_REST - key.length); at + key.length <= end; at++)
      if (nameAt(text, at, key)) return true;
  return false;
}

/** Whether `key` (lower case) is at `at`, ASCII letters compared in any case. */
function nameAt(text: string, at: number, key: string): boolean {
  for (let k = 0; k < key.length; k++) {
    const c = text.charCodeAt(at + k);
    if ((c >= 65 && c <= 90 ? c + 32 : c) !== key.charCodeAt(k)) return false;
  }
  return true;
}

/** Between a key's name and its operator; after the operator (`=>`, `==` and quotes). */
const QUOTE_SPACE = table(' "\'\t');
const OPERATOR_TAIL = table(' "\'\t=>');

function skip(text: string, i: number, chars: Uint8Array, max: number): number {
  const stop = Math.min(text.length, i + max);
  while (i < stop && inClass(chars, text, i)) i++;
  return i;
}
