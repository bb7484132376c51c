/**
 * The one signed-token helper on its own: a token verifies only under its key, purpose and
 * binding; any change to it fails; an expiry is carried, signed, and read back as expired.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SignedTokens, peekSignedToken } from '../../src/contracts/signed-token.js';

const SECRET = 's'.repeat(32);

afterEach(() => vi.useRealTimers());

describe('SignedTokens', () => {
  it('round-trips a payload under its purpose and binding', () => {
    const tokens = new SignedTokens(SECRET);
    const token = tokens.sign('requestState/chain', { s: '~chain.1', n: 2 }, { binding: 'p:alice' });
    expect(tokens.verify('requestState/chain', token, 'p:alice')).toEqual({ s: '~chain.1', n: 2 });
    expect(tokens.open('requestState/chain', token, 'p:alice')).toEqual({
      payload: { s: '~chain.1', n: 2 },
      expiresAt: undefined,
      expired: false,
    });
    // Another holder of the same secret (another replica) reads it too.
    expect(new SignedTokens(SECRET).verify('requestState/chain', token, 'p:alice')).toEqual({ s: '~chain.1', n: 2 });
  });

  it('a token of one purpose never verifies as another, under the same key', () => {
    const tokens = new SignedTokens(SECRET);
    const task = tokens.sign('taskId/wrapped', ['up', 'id-1']);
    const state = tokens.sign('requestState/upstream-round', ['up', 'id-1']);
    expect(tokens.verify('taskId/wrapped', task)).toEqual(['up', 'id-1']);
    expect(tokens.verify('requestState/upstream-round', task)).toBeUndefined();
    expect(tokens.verify('requestState/chain', task)).toBeUndefined();
    expect(tokens.verify('taskId/wrapped', state)).toBeUndefined();
    // The same payload signs differently for each purpose: no MAC can be carried across.
    expect(task.split('.')[0]).toBe(state.split('.')[0]);
    expect(task.split('.')[1]).not.toBe(state.split('.')[1]);
  });

  it('is bound to its binding and its key', () => {
    const tokens = new SignedTokens(SECRET);
    const token = tokens.sign('taskId/wrapped', ['up', 'id'], { binding: 'legacy\u0000s:one' });
    expect(tokens.verify('taskId/wrapped', token, 'legacy\u0000s:one')).toEqual(['up', 'id']);
    expect(tokens.verify('taskId/wrapped', token, 'legacy\u0000s:two')).toBeUndefined();
    expect(tokens.verify('taskId/wrapped', token, 'modern\u0000s:one')).toBeUndefined();
    expect(tokens.verify('taskId/wrapped', token)).toBeUndefined();
    expect(new SignedTokens('t'.repeat(32)).verify('taskId/wrapped', token, 'legacy\u0000s:one')).toBeUndefined();
    // No secret: a random key of this instance, which nobody else has.
    const own = new SignedTokens();
    expect(own.verify('taskId/wrapped', own.sign('taskId/wrapped', 1))).toBe(1);
    expect(new SignedTokens().verify('taskId/wrapped', own.sign('taskId/wrapped', 1))).toBeUndefined();
  });

  it('refuses a token altered anywhere: payload, MAC, expiry, or its shape', () => {
    const tokens = new SignedTokens(SECRET);
    const token = tokens.sign('requestState/upstream-round', { d: 'x', n: 1 }, { expiresAt: Date.now() + 60_000 });
    const [body, expiry, mac] = token.split('.') as [string, string, string];
    const otherBody = Buffer.from(JSON.stringify({ d: 'x', n: 2 })).toString('base64url');
    const flip = (s: string, i: number) => `${s.slice(0, i)}${s[i] === 'A' ? 'B' : 'A'}${s.slice(i + 1)}`;
    const altered = [
      `${otherBody}.${expiry}.${mac}`,
      `${body}.${Number(expiry) + 1}.${mac}`,
      `${body}.${mac}`,
      `${body}.${expiry}.${flip(mac, 0)}`,
      `${body}.${expiry}.${flip(mac, mac.length - 1)}`,
      `${body}.${expiry}.${mac}x`,
      `${body}.${expiry}.${mac}.${mac}`,
      `${body}x.${expiry}.${mac}`,
      `.${expiry}.${mac}`,
      `${body}.1e3.${mac}`,
      'not-a-token',
      '',
      '.',
    ];
    for (const t of altered) expect(tokens.open('requestState/upstream-round', t), t).toBeUndefined();
    expect(tokens.verify('requestState/upstream-round', token)).toEqual({ d: 'x', n: 1 });
  });

  it('carries an optional expiry: past it, open reads the token as expired and verify refuses it', () => {
    vi.useFakeTimers();
    const tokens = new SignedTokens(SECRET);
    const expiresAt = Date.now() + 1000;
    const token = tokens.sign('requestState/upstream-round', { j: 'nonce' }, { expiresAt });
    expect(tokens.open('requestState/upstream-round', token)).toEqual({
      payload: { j: 'nonce' },
      expiresAt,
      expired: false,
    });
    vi.advanceTimersByTime(999);
    expect(tokens.verify('requestState/upstream-round', token)).toEqual({ j: 'nonce' });
    vi.advanceTimersByTime(1);
    expect(tokens.open('requestState/upstream-round', token)).toEqual({
      payload: { j: 'nonce' },
      expiresAt,
      expired: true,
    });
    expect(tokens.verify('requestState/upstream-round', token)).toBeUndefined();
  });

  it('peeks at a payload unverified (for routing), and refuses a purpose that is not a name', () => {
    const tokens = new SignedTokens(SECRET);
    expect(peekSignedToken(tokens.sign('requestState/chain', { s: '~chain.9' }))).toEqual({ s: '~chain.9' });
    expect(peekSignedToken('garbage')).toBeUndefined();
    expect(peekSignedToken('!!!.x')).toBeUndefined();
    expect(() => tokens.sign('a\u0000b', 1)).toThrow(/not a name/);
    expect(() => tokens.open('', 'a.b')).toThrow(/not a name/);
  });
});
