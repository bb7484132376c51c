/**
 * The pure parts of server cards: If-None-Match matching (weak comparison, lists, `*`), the
 * strong ETag, card names from hosts and server paths, and the serverCards config check that
 * keeps a virtual server off an endpoint's card path.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import { cardName, etagOf, matchesEtag, reverseDns } from '../../src/server/card-documents.js';
import { exampleConfig } from '../support/gateway.js';

describe('ETags', () => {
  const tag = etagOf('{"a":1}');

  it('is strong, the same for the same body and another for another', () => {
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(etagOf('{"a":1}')).toBe(tag);
    expect(etagOf('{"a":2}')).not.toBe(tag);
  });

  it('matches If-None-Match weakly, in a list, and for *', () => {
    expect(matchesEtag(tag, tag)).toBe(true);
    expect(matchesEtag(`W/${tag}`, tag)).toBe(true);
    expect(matchesEtag(`"x",  ${tag} ,"y"`, tag)).toBe(true);
    expect(matchesEtag('*', tag)).toBe(true);
  });

  it('does not match another tag, an unquoted one, nothing, or an empty header', () => {
    expect(matchesEtag('"x"', tag)).toBe(false);
    expect(matchesEtag(tag.slice(1, -1), tag)).toBe(false);
    expect(matchesEtag(undefined, tag)).toBe(false);
    expect(matchesEtag('', tag)).toBe(false);
  });
});

describe('card names', () => {
  it('reverses a DNS host, keeps an IP, and makes an IPv6 host or an odd one fit the pattern', () => {
    expect(reverseDns('mcp.example.com')).toBe('com.example.mcp');
    expect(reverseDns('localhost')).toBe('localhost');
    expect(reverseDns('127.0.0.1')).toBe('127.0.0.1');
    expect(reverseDns('[::1]')).toMatch(/^[a-zA-Z0-9.-]+$/);
    expect(reverseDns('')).toBe('localhost');
  });

  it('names a server by its name, else by its path made a name', () => {
    expect(cardName('reader', '/mcp/reader')).toBe('reader');
    expect(cardName(undefined, '/mcp/reader')).toBe('mcp-reader');
    expect(cardName(undefined, '/')).toBe('root');
  });
});

describe('serverCards config checks', () => {
  const problems = (serverCards: unknown, servers: unknown[]) => {
    try {
      exampleConfig({ serverCards, servers });
      return [];
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return err.problems;
    }
  };

  it("refuses a server on the main endpoint's card path or another server's, only with cards on", () => {
    const servers = [
      { path: '/mcp/server-card', tools: ['*'] },
      { path: '/x', tools: ['*'] },
      { path: '/x/server-card/', tools: ['*'] },
    ];
    const found = problems({ enabled: true }, servers);
    expect(found).toEqual([
      expect.stringContaining('servers[0].path: "/mcp/server-card" is an endpoint\'s server card path'),
      expect.stringContaining('servers[2].path: "/x/server-card"'),
    ]);
    expect(problems({ enabled: false }, servers)).toEqual([]);
  });

  it('refuses a bad baseUrl, namespace, description and maxAgeSeconds', () => {
    const found = problems(
      { enabled: true, baseUrl: 'https://x.example/path', namespace: 'a/b', description: '', maxAgeSeconds: -1 },
      [],
    );
    for (const key of ['baseUrl', 'namespace', 'description', 'maxAgeSeconds'])
      expect(found.some((p) => p.includes(key))).toBe(true);
    expect(problems({ enabled: true }, [{ path: '/a', tools: ['*'], card: { public: 'yes' } }]).length).toBe(1);
  });
});
