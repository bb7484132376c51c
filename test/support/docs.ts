/** The README and docs/ as the docs tests read them: pages, their links, their headings' anchors. */
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface Page {
  /** Relative to the repository root, with `/`. */
  path: string;
  text: string;
}

/** README.md and every Markdown page of docs/. */
export function markdownPages(): Page[] {
  const docs = readdirSync(resolve(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs].map((path) => ({ path, text: readFileSync(resolve(ROOT, path), 'utf8') }));
}

/** Every inline link's target (`[text](target)`) outside code blocks and code spans, in order. */
export function linkTargets(text: string): string[] {
  // A code span becomes one letter, so a span inside a link's text (`[`x.md`](x.md)`) leaves the link.
  const plain = text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, 'x');
  return [...plain.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
    seen.set(slug, n + 1);
  }
  return anchors;
}
