/**
 * What a set of policies reads (policy/policy-reads.ts), the decision cache's key: every attribute
 * and tag name used anywhere, the context's attributes, and "all" where a read has no fixed name.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { describe, expect, it } from 'vitest';
import { readsOf } from '../../src/policy/policy-reads.js';
import { ROOT } from '../support/gateway.js';

const reads = (...policies: string[]) => {
  const r = readsOf(policies);
  const sorted = (s: ReadonlySet<string> | 'all') => (s === 'all' ? s : [...s].sort());
  return { attrs: [...r.attrs].sort(), tags: sorted(r.tags), context: sorted(r.context) };
};

describe('what the policies read', () => {
  it('the example policy: its attributes, tags and context attributes, by name', () => {
    const text = readFileSync(resolve(ROOT, 'examples/policy/example.cedar'), 'utf8');
    const parts = cedar.policySetTextToParts(text);
    if (parts.type !== 'success') throw new Error('the example does not parse');
    expect(reads(...parts.policies)).toEqual({
      attrs: ['name', 'readOnlyHint', 'scopes'],
      tags: ['env', 'role'],
      context: ['arguments', 'hour', 'weekday'],
    });
  });

  it('a policy without conditions reads nothing but the uids', () => {
    expect(reads('permit (principal == Gw::Client::"ci", action, resource);')).toEqual({
      attrs: [],
      tags: [],
      context: [],
    });
  });

  it('an attribute of an entity literal, or of a record holding the principal, counts by its name', () => {
    expect(reads('permit (principal, action, resource) when { Gw::Client::"x".address == "a" };').attrs).toEqual([
      'address',
    ]);
    expect(reads('permit (principal, action, resource) when { {p: principal}.p has scopes };').attrs.sort()).toEqual([
      'p',
      'scopes',
    ]);
  });

  it('a tag key that is computed makes every tag read', () => {
    expect(
      reads('permit (principal is Gw::Client, action, resource) when { principal.hasTag(principal.name) };').tags,
    ).toBe('all');
    expect(
      reads('permit (principal is Gw::Client, action, resource) when { context.arguments.hasTag(principal.address) };')
        .tags,
    ).toBe('all');
  });

  it('the context used as a whole value makes every context attribute read', () => {
    expect(reads('permit (principal, action, resource) when { {c: context}.c.hour == 1 };').context).toBe('all');
    expect(
      reads('permit (principal, action, resource) when { (if true then context else context).hour == 1 };').context,
    ).toBe('all');
    // `has` and `.` on the context itself read one attribute each.
    expect(
      reads('permit (principal, action, resource) when { context has hour && context.epoch > 0 };').context,
    ).toEqual(['epoch', 'hour']);
  });

  it("a record's keys are names, not operators", () => {
    expect(
      reads('permit (principal, action, resource) when { {"Value": context.hour, ".": 1, "Var": 2} has Value };'),
    ).toEqual({ attrs: ['Value'], tags: [], context: ['hour'] });
  });
});
