/**
 * Every relative link of README.md and docs/*.md points to a file that exists, and a link with an
 * anchor to a heading of that page: moving a section (or a file) without its links fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, headingAnchors, linkTargets, markdownPages } from '../support/docs.js';

const EXTERNAL = /^(https?:|mailto:)/;

describe('links of README.md and docs/', () => {
  const pages = markdownPages();

  it('finds the pages, and links in them', () => {
    expect(pages.map((p) => p.path)).toContain('docs/architecture.md');
    expect(pages.length).toBeGreaterThan(10);
    expect(linkTargets(pages[0]!.text).filter((t) => !EXTERNAL.test(t)).length).toBeGreaterThan(10);
  });

  it('every relative link names an existing file, and every anchor a heading of its page', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const target of linkTargets(page.text)) {
        if (EXTERNAL.test(target)) continue;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file =
          path === '' ? resolve(ROOT, page.path) : resolve(ROOT, dirname(page.path), decodeURIComponent(path));
        if (!file.startsWith(ROOT) || !existsSync(file)) {
          broken.push(`${page.path}: ${target} (no ${relative(ROOT, file)})`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !headingAnchors(readFileSync(file, 'utf8')).has(anchor)) {
          broken.push(`${page.path}: ${target} (no heading #${anchor} in ${relative(ROOT, file)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('tells a broken link from a good one', () => {
    const anchors = headingAnchors(
      '# Title\n## Other client transports: legacy HTTP+SSE and WebSocket\n## `upstreams`\n## Title\n',
    );
    expect([...anchors]).toEqual([
      'title',
      'other-client-transports-legacy-httpsse-and-websocket',
      'upstreams',
      'title-1',
    ]);
    expect(linkTargets('[a](x.md#y) `[b](not-a-link.md)`\n```\n[c](in-a-block.md)\n```\n[`d`](d.md)')).toEqual([
      'x.md#y',
      'd.md',
    ]);
    expect(existsSync(join(ROOT, 'docs', 'no-such-page.md'))).toBe(false);
  });
});
