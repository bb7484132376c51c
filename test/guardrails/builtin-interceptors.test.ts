/**
 * The built-in interceptors over whole messages (guardrails/builtin-interceptors.ts): `allowFields`
 * leaves the strings under a named key unscanned wherever that key sits (nested, under an array,
 * the whole subtree), and only those; with `block`, a finding under an allowed key refuses nothing;
 * audit mode changes nothing whatever it finds.
 */
import { describe, expect, it } from 'vitest';
import { builtinInterceptor, type Outcome } from '../../src/guardrails/builtin-interceptors.js';
import type { InterceptorConfig } from '../../src/config/interceptors.js';

const pii = (extra: Partial<InterceptorConfig> = {}) =>
  builtinInterceptor({ name: 'pii', action: 'redact', mode: 'on', ...extra } as InterceptorConfig);
function run(config: Partial<InterceptorConfig>, value: unknown): Outcome {
  const out = pii(config).run(value, 'response', { method: 'tools/call' });
  if (out instanceof Promise) throw new Error('a built-in interceptor answers at once, not with a promise');
  return out;
}

const MAIL = 'bob@example.com';

describe('allowFields', () => {
  it('leaves an allowed field as it is and redacts the same text elsewhere', () => {
    const out = run({ allowFields: ['email'] }, { email: MAIL, note: `write to ${MAIL}` });
    expect(out).toEqual({
      verdict: 'redacted',
      kinds: ['email'],
      value: { email: MAIL, note: 'write to [REDACTED:email]' },
    });
  });

  it('applies at any depth, to the whole subtree under the key (arrays and objects in it)', () => {
    const value = {
      structuredContent: {
        people: [
          { name: 'Bob', email: MAIL, phones: ['+44 20 7946 0958'] },
          { name: 'Ann', email: { work: 'ann@example.com', home: ['ann@home.example'] } },
        ],
      },
    };
    const out = run({ allowFields: ['email'] }, value);
    expect(out.value).toEqual({
      structuredContent: {
        people: [
          { name: 'Bob', email: MAIL, phones: ['[REDACTED:phone]'] },
          { name: 'Ann', email: { work: 'ann@example.com', home: ['ann@home.example'] } },
        ],
      },
    });
    expect(out.kinds).toEqual(['phone']);
  });

  it('with nothing found outside the allowed fields: a pass, the very same object', () => {
    const value = { content: [{ type: 'text', text: 'see the contact card' }], contact: { email: MAIL } };
    const out = run({ allowFields: ['contact'] }, value);
    expect(out.verdict).toBe('pass');
    expect(out.value).toBe(value);
  });

  it('names keys, not paths or values: a key named like an allowed value is scanned', () => {
    const out = run({ allowFields: ['email'] }, { [MAIL]: MAIL, mail: MAIL });
    expect(out.value).toEqual({ [MAIL]: '[REDACTED:email]', mail: '[REDACTED:email]' });
  });

  it("allowing `text` exempts every text content item's text (the key MCP content uses)", () => {
    const value = { content: [{ type: 'text', text: `mail ${MAIL}` }], note: MAIL };
    expect(run({ allowFields: ['text'] }, value).value).toEqual({
      content: [{ type: 'text', text: `mail ${MAIL}` }],
      note: '[REDACTED:email]',
    });
  });

  it('with block: a finding under an allowed key refuses nothing, one elsewhere does', () => {
    expect(run({ action: 'block', allowFields: ['email'] }, { email: MAIL }).verdict).toBe('pass');
    expect(run({ action: 'block', allowFields: ['email'] }, { email: MAIL, cc: MAIL })).toMatchObject({
      verdict: 'blocked',
      kinds: ['email'],
    });
  });
});

describe('audit mode', () => {
  it('reports what it would do and changes nothing', () => {
    const value = { note: MAIL };
    const out = run({ mode: 'audit' }, value);
    expect(out).toEqual({ verdict: 'would-redact', kinds: ['email'], value });
    expect(out.value).toBe(value);
  });
});
