/**
 * The guardrails' detectors on their own: each kind found in realistic text, the near misses
 * left alone (no false positives on ids, timestamps, hashes, URLs without passwords), and 1 MiB
 * adversarial inputs answered with the right findings (their time is measured in
 * load/guardrails/linear-time.mjs, not here).
 */
import { describe, expect, it } from 'vitest';
import { findPii } from '../../src/guardrails/pii-scanner.js';
import { findSecrets } from '../../src/guardrails/secrets-scanner.js';
import type { Finding } from '../../src/guardrails/char-classes.js';

const kinds = (found: Finding[]) => found.map((f) => f.kind).sort();
const matched = (text: string, found: Finding[]) => found.map((f) => text.slice(f.start, f.end));

describe('secrets', () => {
  it.each([
    ['aws-access-key', 'id=AKIAIOSFODNN7EXAMPLE;'],
    ['github-token', 'token ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'],
    ['github-token', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz'],
    ['gitlab-token', 'glpat-abcdefghij0123456789'],
    ['slack-token', 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp'],
    ['stripe-key', 'sk_live_51Habcdefghijklmnop'],
    ['google-api-key', 'AIzaSyA1234567890abcdefghijklmnopqrstuv'],
    ['jwt', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
    ['connection-password', 'DATABASE_URL=postgres://app:Sup3rS3cret@db.internal:5432/app'],
    ['assigned-secret', '{"client_secret": "q8Zr2LmX9vT4kP7w"}'],
    ['private-key', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----'],
  ])('finds %s', (kind, text) => {
    expect(kinds(findSecrets(text))).toEqual([kind]);
  });

  it('takes only the password of a connection string, and a whole PEM block', () => {
    const url = 'redis://default:hunter22x@cache:6379';
    expect(matched(url, findSecrets(url))).toEqual(['hunter22x']);
    const pem = 'a\n-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\nb';
    expect(matched(pem, findSecrets(pem))).toEqual(['-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----']);
  });

  it.each([
    ['xAKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPLE', ['AKIAIOSFODNN7EXAMPLE']],
    ['xglpat-glpat-abcdefghij0123456789', ['glpat-abcdefghij0123456789']],
    ['AKIAAKIAIOSFODNN7EXAMPLE (AKIAIOSFODNN7EXAMPLE)', ['AKIAIOSFODNN7EXAMPLE']],
  ])('after a prefix inside a word, finds the next one at a word start: %j', (text, tokens) => {
    expect(matched(text, findSecrets(text))).toEqual(tokens);
  });

  it.each([
    'commit 9fceb02d0ae598e95dc970b74767f19372d61af8',
    'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    'https://example.com/path?x=1',
    'AKIA is a prefix, AKIAshort is not a key',
    'password: changeme',
    'token = "aaaaaaaaaaaaaaaa"',
    '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----',
    'the id is 550e8400-e29b-41d4-a716-446655440000',
  ])('leaves %j alone', (text) => {
    expect(findSecrets(text)).toEqual([]);
  });

  it('answers 1 MiB of repeated near-matches with the findings they hold', () => {
    const mb = (unit: string) => unit.repeat(Math.ceil(2 ** 20 / unit.length));
    expect(findSecrets(mb('AKIA'))).toEqual([]);
    expect(findSecrets(mb('eyJa.'))).toEqual([]);
    expect(findSecrets(mb('-----BEGIN RSA PRIVATE KEY-----'))).toEqual([]);
    expect(findSecrets(mb('a://b:'))).toEqual([]);
    // One run of tokens, too long for the format (255 at most) but at its tail: one token there.
    const run = mb('glpat-');
    expect(findSecrets(run).map((f) => [run.length - f.start, f.kind])).toEqual([[258, 'gitlab-token']]);
    expect(findSecrets(mb('password='))).toEqual([]);
  });
});

describe('pii', () => {
  it.each([
    ['email', 'write to jane.doe+test@mail.example.co.uk today'],
    ['card-number', 'card 4111-1111-1111-1111 exp 12/29'],
    ['card-number', 'amex 378282246310005'],
    ['phone', 'call +44 20 7946 0958'],
    ['phone', 'call (555) 123-4567'],
    ['iban', 'IBAN GB82 WEST 1234 5698 7654 32'],
    ['iban', 'DE89370400440532013000'],
  ])('finds %s', (kind, text) => {
    expect(kinds(findPii(text))).toEqual([kind]);
  });

  it.each([
    'ts 1733280000000 and id 1234567890123456',
    'card 4111 1111 1111 1112 (fails Luhn)',
    'version 2.10.3 on 2026-12-04, port 8080',
    'user@localhost is no address',
    'GB82 WEST 1234 5698 7654 33 (bad check digits)',
    '192.168.100.200',
  ])('leaves %j alone', (text) => {
    expect(findPii(text)).toEqual([]);
  });

  it.each([
    ['after groups that are not one', 'ref ABCD EFGH GB82 WEST 1234 5698 7654 32.', 'GB82 WEST 1234 5698 7654 32'],
    ['after a false start in the same groups', 'GB82 GB82 WEST 1234 5698 7654 32', 'GB82 WEST 1234 5698 7654 32'],
    ['after a group of three', 'AB1 GB82 WEST 1234 5698 7654 32', 'GB82 WEST 1234 5698 7654 32'],
    ['of 15 characters, the shortest (Norway), ending the text', 'pay to NO9386011117947', 'NO9386011117947'],
    ['with two spaces between groups', 'IBAN GB82  WEST 1234 5698 7654 32', 'GB82  WEST 1234 5698 7654 32'],
  ])('finds an IBAN %s, and only its own characters', (_, text, iban) => {
    expect(findPii(text).map((f) => text.slice(f.start, f.end))).toEqual([iban]);
  });

  it.each(['GB82 WEST 1234 5698 7654 32x', 'GB82 WEST 1234 5698 7654 3 2', 'GB82 WEST 12345 698 7654 32'])(
    'finds no IBAN in %j (not ended at a word boundary, or grouped off the fours)',
    (text) => {
      expect(findPii(text).filter((f) => f.kind === 'iban')).toEqual([]);
    },
  );

  it('answers 1 MiB of repeated near-matches', () => {
    const mb = (unit: string) => unit.repeat(Math.ceil(2 ** 20 / unit.length));
    expect(findPii(mb('@'))).toEqual([]);
    expect(findPii(mb('a@b-'))).toEqual([]);
    expect(findPii(mb('4'))).toEqual([]);
    // Only where a group's run is short enough for an IBAN, at the tail, can the check digits pass.
    const groups = mb('GB82 ');
    expect(findPii(groups).every((f) => groups.length - f.start <= 40)).toBe(true);
    expect(findPii(mb('+1 '))).toEqual([]);
  });
});
