/** A session's found tools (tool-search/found-tools.ts): moved to the end, bounded, changed only when the set is. */
import { describe, expect, it } from 'vitest';
import { remember } from '../../src/tool-search/found-tools.js';

describe('remember', () => {
  it('adds new names at the end and says the list changed', () => {
    expect(remember(undefined, ['a', 'b'], 5)).toEqual({ names: ['a', 'b'], changed: true });
    expect(remember(['a'], ['b'], 5)).toEqual({ names: ['a', 'b'], changed: true });
  });

  it('keeps the most recent max, dropping the least recently found', () => {
    expect(remember(['a', 'b', 'c'], ['d'], 3)).toEqual({ names: ['b', 'c', 'd'], changed: true });
    expect(remember([], ['a', 'b', 'c', 'd', 'e'], 2)).toEqual({ names: ['d', 'e'], changed: true });
  });

  it('a name found again moves up: stored, not announced', () => {
    expect(remember(['a', 'b', 'c'], ['a'], 3)).toEqual({ names: ['b', 'c', 'a'], changed: false });
    // Moved up, it outlives the next addition.
    expect(remember(['b', 'c', 'a'], ['d'], 3)).toEqual({ names: ['c', 'a', 'd'], changed: true });
  });

  it('nothing to store when nothing differs', () => {
    expect(remember(['a', 'b'], ['b'], 3)).toBeUndefined();
    expect(remember(['a', 'b'], [], 3)).toBeUndefined();
    expect(remember(undefined, [], 3)).toBeUndefined();
    expect(remember(['a', 'b'], ['b', 'b'], 3)).toBeUndefined();
  });
});
