/**
 * rateLimits as a config says it: what is refused at load (and so by --check and a reload), the
 * warnings of rules that select nothing, and the globs rules match with (a principal's name may
 * hold `*` or `?`: `\` quotes them).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import { compileGlob, rateLimitWarnings } from '../../src/config/rate-limits.js';
import type { RateLimitsConfig } from '../../src/config/schema.js';

const upstreams = [{ name: 'echo', transport: 'stdio', command: 'node' }];
const rule = (extra: Record<string, unknown>) => ({ name: 'r', limit: 10, windowMs: 60000, ...extra });

function problems(rateLimits: unknown): string[] {
  try {
    resolveConfig({ upstreams, rateLimits }, {});
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('rateLimits: refused at load', () => {
  it.each([
    ['a zero limit', rule({ limit: 0 }), 'limit'],
    ['a negative limit', rule({ limit: -5 }), 'limit'],
    ['a window under 1 s', rule({ windowMs: 999 }), 'windowMs'],
    ['a negative burst', rule({ burst: -1 }), 'burst'],
    ['an unknown key', rule({ key: 'session' }), 'key'],
    ['a rule without a name', { limit: 1, windowMs: 1000 }, 'name'],
  ])('%s', (_what, bad, field) => {
    const found = problems({ rules: [bad] });
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).toContain(field);
  });

  it('names used twice', () => {
    expect(problems({ rules: [rule({}), rule({ limit: 5 })] })).toContain(
      'rateLimits.rules: the name "r" is used twice',
    );
  });

  it('takes a well-formed section, with its defaults', () => {
    const config = resolveConfig({ upstreams, rateLimits: { rules: [rule({})] } }, {});
    expect(config.rateLimits).toEqual({
      rules: [{ name: 'r', limit: 10, windowMs: 60000, key: 'principal', burst: 0 }],
      onStoreError: 'allow',
      storeTimeoutMs: 250,
    });
    expect(resolveConfig({ upstreams }, {}).rateLimits).toBeUndefined();
  });
});

describe('rateLimits: warnings', () => {
  const warn = (rules: unknown[], tools?: string[]) =>
    rateLimitWarnings(
      { rules, onStoreError: 'allow', storeTimeoutMs: 250 } as RateLimitsConfig,
      ['echo', 'slow'],
      tools,
    );

  it('a servers glob that fits no upstream', () => {
    expect(warn([rule({ match: { servers: ['ech*', 'mail*'] } })])).toEqual([
      'rateLimits rule "r": servers "mail*" fits no upstream',
    ]);
  });

  it('a tools glob that fits no tool, when the tools are known', () => {
    const r = rule({ match: { tools: ['echo__*', 'nope'] } });
    expect(warn([r])).toEqual([]);
    expect(warn([r], ['echo__echo'])).toEqual(['rateLimits rule "r": tools "nope" fits no tool']);
  });

  it('a rule that can never match: tools, or a tool key, with methods that leave tools/call out', () => {
    expect(warn([rule({ key: 'tool', match: { methods: ['prompts/get'] } })])).toHaveLength(1);
    expect(warn([rule({ match: { tools: ['x'], methods: ['resources/*'] } })])[0]).toContain('can never match');
    expect(warn([rule({ key: 'tool', match: { methods: ['tools/*'] } })])).toEqual([]);
  });
});

describe('rule globs', () => {
  it('* any run, ? one character, anything else itself', () => {
    const g = compileGlob('team-?-*');
    expect(g.test('team-a-x')).toBe(true);
    expect(g.test('team-a-')).toBe(true);
    expect(g.test('team-ab-x')).toBe(false);
    expect(compileGlob('a.b').test('axb')).toBe(false);
    expect(compileGlob('*x*y*').test('..x..y..')).toBe(true);
    expect(compileGlob('*x*y*').test('..y..x..')).toBe(false);
  });

  it('a principal with glob characters: \\ before * or ? matches it literally', () => {
    const g = compileGlob('https://issuer|ops\\*');
    expect(g.test('https://issuer|ops*')).toBe(true);
    expect(g.test('https://issuer|ops-team')).toBe(false);
    expect(compileGlob('who\\?').test('who?')).toBe(true);
    expect(compileGlob('who\\?').test('whom')).toBe(false);
    expect(compileGlob('a\\\\b').test('a\\b')).toBe(true);
  });
});
