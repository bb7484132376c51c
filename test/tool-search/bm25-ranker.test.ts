/** The BM25 ranker and its terms, as a module: what a query finds in a small catalog of real-looking tools. */
import { describe, expect, it } from 'vitest';
import { bm25Ranker } from '../../src/tool-search/bm25-ranker.js';
import { INDEXED, searchable } from '../../src/tool-search/ranker.js';
import { foldTable, term, tokenize } from '../../src/tool-search/terms.js';
import { ToolIndexes } from '../../src/tool-search/index-cache.js';

const TOOLS = [
  { name: 'github__create_issue', description: 'Create a new issue in a GitHub repository', up: 'github' },
  { name: 'github__list_pull_requests', description: 'List pull requests of a repository', up: 'github' },
  { name: 'slack__postMessage', description: 'Post a message to a Slack channel', up: 'slack' },
  { name: 'fs__read_file', description: 'Read the complete contents of a file from disk', up: 'filesystem' },
  {
    name: 'fs__list_directory',
    description: 'Get a detailed listing of all files and directories in a path',
    up: 'filesystem',
  },
  { name: 'maps__geocode', description: 'Convert an address into geographic coordinates', up: 'google-maps' },
  { name: 'pg__query', description: 'Run a read-only SQL query', up: 'postgres' },
].map((t) =>
  searchable(
    {
      name: t.name,
      description: t.description,
      inputSchema: { type: 'object', properties: { target: { type: 'string', description: 'What it acts on' } } },
    },
    t.up,
  ),
);

describe('terms', () => {
  it('splits identifiers on _ - . and camelCase, keeping a camelCase word whole too', () => {
    expect(tokenize('github__create_issue')).toEqual(['github', 'create', 'issue']);
    expect(tokenize('slack.postMessage-v2')).toEqual(['slack', 'postMessage', 'post', 'Message', 'v2']);
    expect(tokenize('parseHTTPResponse')).toEqual(['parseHTTPResponse', 'parse', 'HTTP', 'Response']);
    expect(tokenize('on GitHub')).toEqual(['on', 'GitHub', 'Git', 'Hub']);
  });

  it('drops stop words, stems, folds synonyms onto one term', () => {
    expect(term('the')).toBeNull();
    expect(term('Issues')).toBe('issue');
    expect(term('find')).toBe(term('search'));
    expect(term('folders')).toBe(term('directory'));
    expect(term('forget')).toBe(term('delete'));
    expect(term('reply')).toBe(term('comment'));
    expect(term('done')).toBe(term('closed'));
    expect(term('resolved')).toBe(term('close'));
  });

  it('meets a word in every inflection, and its synonyms in theirs', () => {
    expect(term('closed')).toBe(term('close'));
    expect(term('closing')).toBe(term('close'));
    expect(term('closes')).toBe(term('close'));
    expect(term('created')).toBe(term('create'));
    expect(term('updated')).toBe(term('modify'));
    expect(term('removing')).toBe(term('delete'));
  });

  it("gives a word its shape's kind: a repository, a channel, a user, an email, a file, a web page", () => {
    const repo = tokenize('open bugs in facebook/react?');
    expect(repo).toContain('repository');
    // A repository's owner and name are only names: "react" must not fold onto reactions.
    expect(repo).not.toContain('react');
    expect(tokenize('what was said in #support')).toEqual(['channel', 'what', 'was', 'said', 'in']);
    expect(tokenize('ask @octocat')).toEqual(['user', 'ask']);
    expect(tokenize('mail jo@example.org')).toEqual(['email', 'mail']);
    const image = tokenize('look at notes/board.jpg, please');
    expect(image).toEqual(expect.arrayContaining(['file', 'image', 'notes', 'board']));
    expect(image).not.toContain('jpg');
    expect(tokenize('every .csv under Downloads')).toEqual(['file', 'every', 'under', 'Downloads']);
    expect(tokenize('go to https://example.com')).toEqual(['url', 'go', 'to', 'https', 'example', 'com']);
  });

  it('leaves alone what only looks like a shape: alternatives, sentence ends, dotted identifiers', () => {
    expect(tokenize('the lat/long of it')).toEqual(['the', 'lat', 'long', 'of', 'it']);
    expect(tokenize('read and/or write')).toEqual(['read', 'and', 'or', 'write']);
    expect(tokenize('add 3/4 cup')).toEqual(['add', '3', '4', 'cup']);
    expect(tokenize('Read a file. Then stop.')).toEqual(['Read', 'a', 'file', 'Then', 'stop']);
    expect(tokenize('document.title')).toEqual(['document', 'title']);
  });

  it("splits an upstream's hostile text in one pass: long runs of slashes, dots and phrases", () => {
    // Three of these took quadratic time before 9f0e5ce (a pattern anchored at a word's end, an in-place splice): 97 s.
    const n = 200_000;
    expect(tokenize(`${'a/'.repeat(n)}.`)).toHaveLength(n);
    expect(tokenize(`x${'.'.repeat(n)}x`)).toEqual(['x', 'x']);
    expect(tokenize(`${'.'.repeat(n)} acme/api`)).toEqual(['repository']);
    expect(tokenize(`a@${'b.c'.repeat(n)}1`).length).toBeGreaterThan(n);
    expect(tokenize('set up '.repeat(n))).toEqual(Array(n).fill('create'));
  });

  it('folds a two-word act onto its term, whatever its inflection, and only that pair', () => {
    expect(tokenize('Pull up the README')).toEqual(['show', 'the', 'README']);
    expect(tokenize('pulling up')).toEqual(['show']);
    expect(tokenize('has anyone signed off on it')).toEqual(['has', 'anyone', 'approve', 'on', 'it']);
    expect(tokenize('list pull requests')).toEqual(['list', 'pull', 'requests']);
    expect(term('show')).toBe(term('read'));
    expect(term('approve')).toBe(term('review'));
  });

  it('refuses a synonym table where one word sits in two groups', () => {
    expect(foldTable([['fork', 'copy'], ['clone']]).get('copy')).toBe('fork');
    expect(() =>
      foldTable([
        ['fork', 'copy'],
        ['clone', 'copy'],
      ]),
    ).toThrow('"copy" is in two groups');
  });
});

describe('bm25Ranker', () => {
  const top = async (query: string) => (await (await bm25Ranker(TOOLS)).search(query, 3))[0];

  it('ranks the tool that answers a natural-language task first', async () => {
    expect(await top('open a ticket on github')).toBe('github__create_issue');
    expect(await top('send a chat message to my team')).toBe('slack__postMessage');
    expect(await top('show me what is in this folder')).toBe('fs__list_directory');
    expect(await top('get the contents of a document')).toBe('fs__read_file');
    expect(await top('latitude and longitude of an address')).toBe('maps__geocode');
    expect(await top('database sql select')).toBe('pg__query');
    expect(await top('which PRs are open')).toBe('github__list_pull_requests');
  });

  it("searches a parameter's enum values with its description, the first few short ones", async () => {
    const state = { type: 'string', description: 'The new state', enum: ['open', 'closed'] };
    const entry = (name: string, properties: Record<string, unknown>) =>
      searchable({ name, description: 'Change an existing issue', inputSchema: { type: 'object', properties } }, 'gh');
    const tools = [
      entry('gh__edit_issue', { title: { type: 'string', description: 'The new title' } }),
      entry('gh__update_issue', { state }),
    ];
    expect((await (await bm25Ranker(tools)).search('mark the issue as done', 2))[0]).toBe('gh__update_issue');
    expect(tools[1]!.params).toEqual([{ name: 'state', description: 'The new state open closed' }]);
    const many = searchable(
      { name: 'x', inputSchema: { properties: { v: { items: { enum: [...Array(20).keys()].map((i) => `v${i}`) } } } } },
      'x',
    );
    expect(many.params[0]!.description.split(' ')).toHaveLength(16);
    const long = searchable(
      { name: 'y', inputSchema: { properties: { v: { enum: ['z'.repeat(41), 7, 'ok'] } } } },
      'y',
    );
    expect(long.params[0]!.description).toBe('ok');
  });

  it('reads owner/name as a repository, not as the words of its name', async () => {
    const tools = [
      { name: 'slack__add_reaction', description: 'Add an emoji reaction to a message' },
      { name: 'github__list_issues', description: 'List issues in a GitHub repository' },
    ].map((t) => searchable({ ...t, inputSchema: { type: 'object' } }, t.name.split('__')[0]!));
    const ranker = await bm25Ranker(tools);
    expect(await ranker.search('open bugs in facebook/react', 1)).toEqual(['github__list_issues']);
  });

  it("indexes the first part of an upstream's text, however long it sends it", () => {
    const long = 'd'.repeat(1e5);
    const properties = Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [`p${i}${'n'.repeat(5000)}`, { description: long }]),
    );
    const tool = searchable(
      {
        name: 'big',
        title: 't'.repeat(1e5),
        description: 'x '.repeat(1e6),
        inputSchema: { type: 'object', properties },
      },
      'up',
    );
    expect(tool.description).toHaveLength(INDEXED.descriptionChars);
    expect(tool.title).toHaveLength(INDEXED.titleChars);
    expect(tool.params).toHaveLength(INDEXED.params);
    expect(tool.params[0]!.name).toHaveLength(INDEXED.paramChars);
    expect(tool.params[127]!.description).toHaveLength(INDEXED.paramChars);
    expect(tool.params[127]!.name.startsWith('p127')).toBe(true);
  });

  it('finds nothing for words no tool has, and keeps to the limit', async () => {
    const ranker = await bm25Ranker(TOOLS);
    expect(await ranker.search('xylophone quartz', 5)).toEqual([]);
    expect((await ranker.search('repository file message', 2)).length).toBe(2);
  });
});

describe('ToolIndexes', () => {
  it('builds one index per list version, in a later turn, and a new list gets a new one', async () => {
    let builds = 0;
    const indexes = new ToolIndexes(async (tools) => {
      builds++;
      return bm25Ranker(tools);
    });
    const list = [{ name: 'a__echo', description: 'Echo text' }];
    const describe = (e: Record<string, unknown>) => searchable(e, 'a');
    const first = indexes.index(list, describe);
    expect(builds).toBe(0);
    const again = indexes.index(list, describe);
    expect(again).toBe(first);
    expect((await first).byName.has('a__echo')).toBe(true);
    expect(builds).toBe(1);
    await indexes.index([...list], describe);
    expect(builds).toBe(2);
  });

  it('a failed build is retried on the next ask', async () => {
    let fail = true;
    const indexes = new ToolIndexes(async (tools) => {
      if (fail) throw new Error('boom');
      return bm25Ranker(tools);
    });
    const list = [{ name: 'x' }];
    await expect(indexes.index(list, (e) => searchable(e, ''))).rejects.toThrow('boom');
    fail = false;
    expect((await indexes.index(list, (e) => searchable(e, ''))).byName.size).toBe(1);
  });
});
