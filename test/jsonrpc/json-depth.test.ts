/**
 * The nesting check every POST body passes before JSON.parse (limits.maxJsonDepth). It first
 * counts opening brackets and lets a body with no more of them than the limit through without
 * walking it; these cases sit on both sides of that shortcut.
 */
import { describe, expect, it } from 'vitest';
import { exceedsDepth } from '../../src/jsonrpc/json-depth.js';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('exceedsDepth', () => {
  it('lets through exactly the limit and refuses one more, arrays and objects alike', () => {
    expect(exceedsDepth(nested(3), 3)).toBe(false);
    expect(exceedsDepth(nested(4), 3)).toBe(true);
    expect(exceedsDepth('{"a":{"b":{"c":1}}}', 3)).toBe(false);
    expect(exceedsDepth('{"a":{"b":{"c":{}}}}', 3)).toBe(true);
  });

  it('counts depth, not brackets: many shallow brackets past the limit are fine', () => {
    // 10 openings (more than the limit, so the walk runs), never deeper than 2.
    expect(exceedsDepth(JSON.stringify([[1], [2], [3], [4], [5], [6], [7], [8], [9]]), 3)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(exceedsDepth(JSON.stringify({ text: '[[[[[[[[[[' }), 3)).toBe(false);
    expect(exceedsDepth(JSON.stringify({ text: 'say \\"[[[[[[[[\\" twice' }), 3)).toBe(false);
    expect(exceedsDepth(`{"text":"[[[[[[","deep":${nested(4)}}`, 3)).toBe(true);
  });

  it('refuses a deep body that never closes', () => {
    expect(exceedsDepth('['.repeat(10_000), 64)).toBe(true);
  });
});
