// How tool text and queries become terms, the same way on both sides: identifiers split on
// `_ - .` and camelCase, lower case, stop words gone, a light stemmer, and a small synonym table
// that folds words agents use for the same act onto one term ("find", "lookup" -> "search").

/** Words that say nothing about which tool is meant. */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be by can do does for from get give how i in into is it its me my need of on or ' +
    'our please should so some that the their them then there these this to tool tools use using want was ' +
    'we what when where which while who will with would you your'
  ).split(' '),
);

/**
 * Groups of words agents and tool authors use for one thing; each folds onto its group's first.
 * Grown from the misses of load/tool-search/design*.json (tasks written apart from the held-out
 * sets, which only report), general words only: a word that names one task's specifics,
 * or one that agents use for several acts ("know", "sign", "discussion": tried and taken out), makes
 * tools match queries they don't answer.
 */
const SYNONYM_GROUPS: ReadonlyArray<readonly string[]> = [
  ['search', 'find', 'lookup', 'look', 'query', 'locate', 'discover', 'seek', 'hunt', 'grep'],
  ['create', 'make', 'new', 'add', 'start', 'insert', 'append'],
  ['delete', 'remove', 'erase', 'destroy', 'drop', 'discard', 'forget', 'wipe', 'purge', 'rid', 'trash', 'clear'],
  ['update', 'edit', 'modify', 'change', 'patch', 'alter'],
  ['read', 'fetch', 'retrieve', 'show', 'view', 'load', 'download', 'obtain', 'grab', 'content', 'contents', 'written'],
  ['list', 'enumerate', 'browse', 'all'],
  ['write', 'save', 'store', 'put', 'upload', 'persist', 'stash'],
  ['send', 'post', 'publish', 'message', 'notify', 'chat', 'tell', 'announce', 'inform', 'broadcast'],
  ['run', 'execute', 'exec', 'invoke', 'launch'],
  ['file', 'document', 'doc'],
  ['directory', 'folder', 'dir'],
  ['repository', 'repo', 'project'],
  ['issue', 'ticket', 'bug'],
  ['pr', 'prs', 'pull', 'merge', 'mr', 'mrs'],
  ['image', 'picture', 'photo', 'screenshot', 'paint', 'painting', 'draw', 'drawing', 'illustration', 'artwork'],
  ['web', 'internet', 'online', 'website', 'page', 'url', 'browser', 'navigate', 'visit', 'go'],
  ['sql', 'database', 'db', 'table'],
  ['user', 'person', 'member', 'people', 'account'],
  ['location', 'place', 'address', 'map', 'geocode', 'coordinate', 'latitude', 'longitude', 'lat', 'lng'],
  ['route', 'directions', 'distance', 'drive', 'driving', 'travel', 'commute', 'car'],
  ['elevation', 'altitude', 'height', 'high', 'sea', 'climb'],
  ['memory', 'mem', 'remember', 'knowledge', 'recall', 'graph', 'memorize', 'memorized', 'memorise', 'memorised'],
  ['relation', 'relationship', 'connect', 'connection', 'link'],
  ['sum', 'plus', 'total', 'addition', 'calculate'],
  ['gzip', 'compress', 'zip', 'archive', 'gz', 'squash', 'shrink'],
  ['status', 'check', 'ci', 'green', 'passing', 'failing'],
  ['review', 'approve', 'approval', 'feedback', 'lgtm'],
  ['comment', 'reply', 'respond', 'remark', 'answer'],
  ['fork', 'copy', 'clone'],
  ['commit', 'landed'],
  ['reaction', 'react', 'emoji', 'thumb', 'thumbs'],
  ['history', 'said', 'saying', 'lately', 'conversation', 'catch', 'talk', 'talked'],
  ['cache', 'redis', 'kv'],
  ['expire', 'expiration', 'expiry', 'ttl', 'vanish'],
  ['click', 'press', 'hit', 'tap', 'button'],
  ['hover', 'mouse', 'mouseover'],
  ['fill', 'type', 'enter', 'input', 'field', 'box'],
  ['select', 'choose', 'pick', 'dropdown'],
  ['javascript', 'js', 'script', 'evaluate', 'console', 'eval'],
  ['echo', 'repeat', 'parrot'],
  ['size', 'space', 'big', 'biggest', 'largest', 'bytes'],
  ['move', 'rename', 'relocate', 'mv'],
  ['observation', 'fact', 'detail', 'note'],
  ['label', 'tag'],
  ['close', 'resolve', 'done'],
  ['code', 'definition', 'defined', 'implementation', 'source'],
  ['multiple', 'several', 'together', 'many', 'batch', 'both'],
];

// Each word's stem too, so that an inflection the table does not list still folds ("updated", "removing").
const SYNONYMS = foldTable(SYNONYM_GROUPS.map((group) => [...new Set([...group, ...group.map(stem)])]));

/** Word -> its group's first word. A word in two groups would silently fold onto the later one: refused. */
export function foldTable(groups: ReadonlyArray<readonly string[]>): ReadonlyMap<string, string> {
  const table = new Map<string, string>();
  for (const group of groups)
    for (const word of group) {
      if (table.has(word)) throw new Error(`synonym "${word}" is in two groups`);
      table.set(word, group[0]!);
    }
  return table;
}

/** A capital after a small letter or digit ("postMessage"), or before a capitalized word ("HTTPResponse"). */
const CAMEL_CASE = /[\p{Ll}\p{N}]\p{Lu}|\p{Lu}\p{Lu}\p{Ll}{2}/u;

/**
 * Identifiers and prose alike: any run of non-letters/digits splits words, and camelCase splits a
 * word into its parts while the whole word stays a token too: "GitHub" in a query must meet the
 * upstream named "github", and "postMessage" must meet "post message".
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const word of shapeWords(text, tokens).split(/[^\p{L}\p{N}]+/u)) {
    if (word.length === 0) continue;
    // Most words have no inner capital: one test, not two replaces and a split (50,000 tools built in 0.8 s, not 1.3).
    if (!CAMEL_CASE.test(word)) {
      tokens.push(word);
      continue;
    }
    const parts = word
      .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
      .replace(/(\p{Lu})(\p{Lu}\p{Ll}{2,})/gu, '$1 $2')
      .split(' ');
    tokens.push(word, ...parts);
  }
  return foldPhrases(tokens);
}

/**
 * Two words that name one act, unlike either alone ("pull up" a file is not a pull request; "sign
 * off" is an approval), as the term of that act. Keyed by the first word's stem and the second word.
 */
const PHRASES: ReadonlyMap<string, string> = new Map([
  ['pull up', 'show'],
  ['look at', 'show'],
  ['write back', 'reply'],
  ['sign off', 'approve'],
  ['keep track', 'remember'],
  ['set up', 'create'],
  ['spin up', 'create'],
  ['tear down', 'delete'],
]);

const PHRASE_ENDS: ReadonlySet<string> = new Set([...PHRASES.keys()].map((p) => p.split(' ')[1]!));
const PHRASE_END_CHARS = Math.max(...[...PHRASE_ENDS].map((w) => w.length));

/** One pass into a new list: splicing in place is quadratic in a long text of phrases (an upstream's description). */
function foldPhrases(tokens: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const next = tokens[i + 1];
    // Most tokens are longer than any phrase's end: one comparison, not a lower-casing.
    if (next !== undefined && next.length <= PHRASE_END_CHARS) {
      const end = next.toLowerCase();
      const act = PHRASE_ENDS.has(end) ? PHRASES.get(`${stem(tokens[i]!.toLowerCase())} ${end}`) : undefined;
      if (act !== undefined) {
        out.push(act);
        i++;
        continue;
      }
    }
    out.push(tokens[i]!);
  }
  return out;
}

/**
 * A word holding a character that may make it a path, a slug, a channel, a handle or a URL. The part
 * before the first such character holds none of them, so a match never backtracks over a long word.
 */
const SHAPED = /(?<!\S)[^\s/#@.:]*[/#@.:]\S*/gu;
/** Most text has none: a sentence's last period is followed by a space or nothing. */
const MAYBE_SHAPED = /[/#@:]|\.[^\s.,:;!?)]/u;
const FILE_EXTENSIONS: ReadonlySet<string> = new Set(
  (
    'md txt json jsonl yaml yml toml ini env cfg conf csv tsv log xml html htm css js mjs cjs ts tsx jsx py rb go rs ' +
    'java kt c h cpp hpp cs php sh sql pdf doc docx xls xlsx ppt pptx zip gz tgz tar png jpg jpeg gif svg webp bmp'
  ).split(' '),
);
const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set('png jpg jpeg gif svg webp bmp'.split(' '));
const OPENING = '("\'`<[{';
const CLOSING = ')"\'`>]},.:;!?';
const SLUG = /^[\p{L}\p{N}][\p{L}\p{N}_.-]*\/[\p{L}\p{N}][\p{L}\p{N}_.-]*$/u;

/**
 * Words whose shape says what they name, whatever their letters: `owner/name` a repository,
 * `#name` a channel, `@name` a user, `a@b.org` an email, `dir/x.png` or `.csv` a file (an image too
 * by its extension), `https://…` a web page. The shape's kind goes into `tokens`; the name's own
 * letters go when they are only a name (a repository's, a channel's: "facebook/react" is not about
 * reactions), and stay where they may say more (a file's name, a URL's host). Returns the text left.
 */
function shapeWords(text: string, tokens: string[]): string {
  if (!MAYBE_SHAPED.test(text)) return text;
  return text.replace(SHAPED, (chunk) => {
    const shape = shapeOf(trimPunctuation(chunk));
    if (shape === undefined) return chunk;
    tokens.push(...shape.kinds);
    return shape.keep ?? ' ';
  });
}

/**
 * Quotes and brackets around a word, and a sentence's punctuation after it, go. A loop: a pattern
 * anchored at the end backtracks over a long run of them (quadratic).
 */
function trimPunctuation(word: string): string {
  let start = 0;
  let end = word.length;
  while (start < end && OPENING.includes(word[start]!)) start++;
  while (end > start && CLOSING.includes(word[end - 1]!)) end--;
  return word.slice(start, end);
}

function shapeOf(word: string): { kinds: string[]; keep?: string } | undefined {
  if (/^(https?:\/\/|www\.)/i.test(word)) return { kinds: ['url'], keep: word };
  if (/^#\p{L}[\p{L}\p{N}_-]*$/u.test(word)) return { kinds: ['channel'] };
  if (/^@\p{L}[\p{L}\p{N}_.-]*$/u.test(word)) return { kinds: ['user'] };
  if (/^[^@]+@[^@]+\.\p{L}{2,}$/u.test(word)) return { kinds: ['email'] };
  const dot = word.lastIndexOf('.');
  const extension = dot >= 0 ? word.slice(dot + 1).toLowerCase() : '';
  if (FILE_EXTENSIONS.has(extension))
    return { kinds: IMAGE_EXTENSIONS.has(extension) ? ['file', 'image'] : ['file'], keep: word.slice(0, dot) };
  if (isSlug(word)) return { kinds: ['repository'] };
  return undefined;
}

/**
 * `owner/name`. Not "lat/long", "read/write" or "and/or", words that name acts or things (an owner is
 * a person's or an organization's name, seldom a word the tables know), nor "3/4" (no letter).
 */
function isSlug(word: string): boolean {
  if (!SLUG.test(word)) return false;
  const [first, second] = word.toLowerCase().split('/') as [string, string];
  if (!/\p{L}/u.test(first) || !/\p{L}/u.test(second)) return false;
  return !(STOP_WORDS.has(first) || STOP_WORDS.has(second) || SYNONYMS.has(first) || SYNONYMS.has(stem(first)));
}

/** One token as a term: null when it says nothing (a stop word). */
export function term(token: string): string | null {
  const word = token.toLowerCase();
  if (STOP_WORDS.has(word)) return null;
  const stemmed = stem(word);
  return SYNONYMS.get(word) ?? SYNONYMS.get(stemmed) ?? stemmed;
}

/**
 * English plurals and verb endings, conservatively: "issues" -> "issue", "listing" -> "list". A
 * final e goes too, so that "close", "closed" and "closing" are one term ("clos").
 */
function stem(word: string): string {
  if (word.length <= 4 || /\d/.test(word)) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return dropE(undouble(word.slice(0, -3)));
  if (word.endsWith('ed') && word.length > 5) return dropE(undouble(word.slice(0, -2)));
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return dropE(word.slice(0, -1));
  return dropE(word);
}

function dropE(word: string): string {
  return word.length > 4 && word.endsWith('e') && !word.endsWith('ee') ? word.slice(0, -1) : word;
}

function undouble(word: string): string {
  const n = word.length;
  return n > 2 && word[n - 1] === word[n - 2] && !'lsz'.includes(word[n - 1]!) ? word.slice(0, -1) : word;
}

/**
 * What decides the terms, as text: the tables and the code. An index made under another
 * fingerprint holds other terms, so a shared index is keyed by it (index-share.ts).
 */
export const TERMS_FINGERPRINT = JSON.stringify([
  [...STOP_WORDS],
  SYNONYM_GROUPS,
  CAMEL_CASE.source,
  [...PHRASES],
  [...FILE_EXTENSIONS, SHAPED.source, MAYBE_SHAPED.source, OPENING, CLOSING, SLUG.source],
  ...[tokenize, foldPhrases, shapeWords, trimPunctuation, shapeOf, isSlug, term, stem, dropE, undouble].map(String),
]);
