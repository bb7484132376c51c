/**
 * The Limits table of docs/limits-and-errors.md against the config schema: every key it names is
 * a key of the schema, and where a row names one key and states its default plainly ("10 s",
 * "4 MiB", "1,000"), that is the schema's default.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { ROOT } from '../support/docs.js';

interface Row {
  bound: string;
  defaultText: string;
  keys: string[];
}

function limitRows(): Row[] {
  const page = readFileSync(resolve(ROOT, 'docs/limits-and-errors.md'), 'utf8');
  const start = page.indexOf('\n## Limits');
  const section = page.slice(start, page.indexOf('\n## ', start + 1));
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| bound ') || line.startsWith('|---')) continue;
    const [bound, defaultText, keyCell] = line.split(' | ').map((c) => c.replace(/^\| /, ''));
    let last = '';
    const keys: string[] = [];
    // `upstreams[].pool.maxInFlight`, `.queueSize`: a key that starts with a dot is a sibling of the one before.
    for (const m of keyCell!.matchAll(/`([^`]+)`/g)) {
      const token = m[1]!;
      if (token.includes(' ')) continue; // `node --max-http-header-size`: no config key
      last = token.startsWith('.') ? `${last.slice(0, last.lastIndexOf('.'))}${token}` : token;
      keys.push(last);
    }
    rows.push({ bound: bound!, defaultText: defaultText!, keys });
  }
  return rows;
}

type Node = { properties?: Record<string, Node>; items?: Node & { oneOf?: Node[] }; anyOf?: Node[]; default?: unknown };

/** The schema node of a key path (`upstreams[].pool.max`), through arrays, transport branches and `false | {…}`. */
function nodeAt(path: string): Node | undefined {
  let nodes: Node[] = [configSchema as unknown as Node];
  for (const part of path.split('.')) {
    const [name, array] = part.endsWith('[]') ? [part.slice(0, -2), true] : [part, false];
    nodes = nodes
      .flatMap((n) => [n, ...(n.anyOf ?? [])])
      .map((n) => n.properties?.[name])
      .filter((n): n is Node => n !== undefined);
    if (array) nodes = nodes.flatMap((n) => (n.items ? [n.items, ...(n.items.oneOf ?? [])] : []));
  }
  return nodes[0];
}

/** A default as the table states it, in the key's own unit; undefined when it is not stated plainly. */
function statedDefault(text: string, key: string): number | undefined {
  const m = /^([\d,]+) ?(ms|s|h|MiB|KiB)?(?:$|[ ,(])/.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]!.replace(/,/g, ''));
  const seconds = { s: 1, h: 3600 }[m[2] as 's' | 'h'];
  if (seconds !== undefined) return key.endsWith('Seconds') ? n * seconds : n * seconds * 1000;
  if (m[2] === 'MiB') return n * 1024 * 1024;
  if (m[2] === 'KiB') return n * 1024;
  return n;
}

describe('the Limits table of docs/limits-and-errors.md', () => {
  const rows = limitRows();

  it('names only keys the config schema has', () => {
    expect(rows.length).toBeGreaterThan(30);
    const keys = rows.flatMap((r) => r.keys);
    expect(keys.length).toBeGreaterThan(25);
    expect(keys.filter((k) => nodeAt(k) === undefined)).toEqual([]);
  });

  it('states the schema defaults of the keys it names one by one', () => {
    const checked: string[] = [];
    const wrong: string[] = [];
    for (const row of rows) {
      if (row.keys.length !== 1) continue;
      const key = row.keys[0]!;
      const stated = statedDefault(row.defaultText, key);
      if (stated === undefined) continue;
      checked.push(key);
      if (nodeAt(key)?.default !== stated)
        wrong.push(`${key}: the table says ${row.defaultText}, the schema ${String(nodeAt(key)?.default)}`);
    }
    expect(wrong).toEqual([]);
    expect(checked).toEqual(
      expect.arrayContaining([
        'server.headersTimeoutMs',
        'limits.bodyBytes',
        'sessions.ttlSeconds',
        'upstreams[].pool.max',
      ]),
    );
  });

  it('reads a stated default as the key means it', () => {
    expect(statedDefault('10 s', 'server.headersTimeoutMs')).toBe(10_000);
    expect(statedDefault('1 h', 'sessions.ttlSeconds')).toBe(3600);
    expect(statedDefault('4 MiB, checked before each message', 'limits.bodyBytes')).toBe(4 * 1024 * 1024);
    expect(statedDefault('100,000 (memory: per replica)', 'limits.maxSessions')).toBe(100_000);
    expect(statedDefault("as many as a principal's live tasks", 'tasks.maxPerPrincipal')).toBeUndefined();
    expect(nodeAt('upstreams[].pool.queueSize')?.default).toBe(1000);
    expect(nodeAt('limits.noSuchKey')).toBeUndefined();
  });
});
