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
 * Kept small on purpose: a wide table makes every tool match every query.
 */
const SYNONYM_GROUPS: ReadonlyArray<readonly string[]> = [
  ['search', 'find', 'lookup', 'look', 'query', 'locate', 'discover', 'seek'],
  ['create', 'make', 'new', 'add', 'start', 'insert'],
  ['delete', 'remove', 'erase', 'destroy', 'drop', 'discard'],
  ['update', 'edit', 'modify', 'change', 'patch', 'alter'],
  ['read', 'fetch', 'retrieve', 'show', 'view', 'load', 'download', 'obtain'],
  ['list', 'enumerate', 'browse', 'all'],
  ['write', 'save', 'store', 'put', 'upload', 'persist'],
  ['send', 'post', 'publish', 'message', 'notify', 'chat'],
  ['run', 'execute', 'exec', 'invoke', 'launch'],
  ['file', 'document', 'doc'],
  ['directory', 'folder', 'dir'],
  ['repository', 'repo', 'project'],
  ['issue', 'ticket', 'bug'],
  ['pr', 'prs', 'pull', 'merge'],
  ['image', 'picture', 'photo', 'screenshot'],
  ['web', 'internet', 'online', 'website', 'page', 'url', 'browser'],
  ['sql', 'database', 'db', 'table'],
  ['user', 'person', 'member', 'people', 'account'],
  ['location', 'place', 'address', 'map', 'geocode'],
  ['route', 'directions', 'navigate', 'distance'],
];

const SYNONYMS: ReadonlyMap<string, string> = new Map(
  SYNONYM_GROUPS.flatMap((group) => group.map((word) => [word, group[0]!] as const)),
);

/** Identifiers and prose alike: camelCase and any run of non-letters/digits split words. */
export function tokenize(text: string): string[] {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll}{2,})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

/** One token as a term: null when it says nothing (a stop word). */
export function term(token: string): string | null {
  const word = token.toLowerCase();
  if (STOP_WORDS.has(word)) return null;
  const stemmed = stem(word);
  return SYNONYMS.get(word) ?? SYNONYMS.get(stemmed) ?? stemmed;
}

/** English plurals and verb endings, conservatively: "issues" -> "issue", "listing" -> "list". */
function stem(word: string): string {
  if (word.length <= 4 || /\d/.test(word)) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return undouble(word.slice(0, -3));
  if (word.endsWith('ed') && word.length > 5) return undouble(word.slice(0, -2));
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1);
  return word;
}

function undouble(word: string): string {
  const n = word.length;
  return n > 2 && word[n - 1] === word[n - 2] && !'lsz'.includes(word[n - 1]!) ? word.slice(0, -1) : word;
}
