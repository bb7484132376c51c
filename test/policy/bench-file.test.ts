/** The bench's 20-rule policy (examples/policy/bench-20.cedar) compiles: the decision-cost row stays runnable. */
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { PolicySet } from '../../src/policy/policy-set.js';
import { ROOT } from '../support/gateway.js';

it('the bench policy has 20 rules and validates', () => {
  expect(PolicySet.load(resolve(ROOT, 'examples/policy/bench-20.cedar')).ids).toHaveLength(20);
});
