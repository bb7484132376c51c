/**
 * docs/architecture.md names every file under src/ (by its path relative to src/, in a code span)
 * and no file that is not there: a file added, moved or removed without its line there fails.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/docs.js';

const SRC = resolve(ROOT, 'src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [relative(SRC, path).split(sep).join('/')];
  });
}

/** The `.ts` paths the page names in code spans, but the tests' own (`test/…`). */
function namedPaths(text: string): string[] {
  return [...text.matchAll(/`([A-Za-z0-9_./-]+\.ts)`/g)].map((m) => m[1]!).filter((p) => !p.startsWith('test/'));
}

describe('docs/architecture.md', () => {
  const page = readFileSync(resolve(ROOT, 'docs/architecture.md'), 'utf8');
  const files = filesUnder(SRC);

  it('names every file under src/ by its path relative to src/', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((f) => !page.includes(`\`${f}\``))).toEqual([]);
  });

  it('names no file that src/ does not have', () => {
    const present = new Set(files);
    expect(namedPaths(page).filter((p) => !present.has(p))).toEqual([]);
  });

  it('keeps a glossary at the top', () => {
    const headings = [...page.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings[0]).toBe('Glossary');
  });
});
