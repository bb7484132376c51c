#!/usr/bin/env node
// The shape rules of src/, checked from the code itself (run in CI by .ci/run):
//   - no file over MAX_FILE_LINES lines, no function over MAX_FUNCTION_LINES lines, no line over
//     MAX_LINE_CHARS characters (Prettier's print width; what it cannot break is broken by hand);
//   - imports between folders follow the layer order below: a folder imports only from folders
//     below it, and from the ones every layer may use (so there is no cycle between folders).
//   - folders named APART do not import each other, though the layer order would let one do so;
//   - a FENCED folder is private to the folder around it: nothing outside that imports it;
// Prints one line per breach and a summary; exits 1 on any breach.
//
//   node scripts/check-structure.mjs [src]
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 100;
const MAX_LINE_CHARS = 120;

/** Top to bottom: each folder may import the folders after it. `.` is src/ itself (main.ts, app.ts). */
const LAYERS = [
  '.',
  'server',
  'transport',
  'gateway',
  'tool-search',
  'guardrails',
  'policy',
  'tasks',
  'stateless',
  'streams',
  'session',
  'cluster',
  'quota',
  'rate-limit',
  'redis',
  'upstream',
  'upstream-auth',
  'contracts',
];
/**
 * Folders every layer may import; they import none of the layers (only each other, below).
 * `timing` (backoff, deadlines, abort) imports nothing at all.
 */
const SHARED = ['observability', 'config', 'jsonrpc', 'timing'];
/**
 * Pairs of layers that import neither way although the order above would allow the higher to use
 * the lower: what they share lives in contracts/ (or a shared folder), not in either of them.
 * The transports call the virtual server only through `contracts/mcp-handler.ts`; Redis
 * connections take their backoff from `timing/`, as the upstreams do.
 */
const APART = [
  ['transport', 'gateway'],
  ['redis', 'upstream'],
];
/**
 * [folder, owner] pairs: only files under `owner` import anything under `folder`. The wires are
 * how upstream/ talks to servers; the layers above see workers and worker sets, never a wire.
 */
const FENCED = [['upstream/wires', 'upstream']];

const root = resolve(process.argv[2] ?? 'src');

/** @param {string} dir @returns {string[]} */
function tsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** @param {string} file */
function folderOf(file) {
  const rel = relative(root, file);
  return rel.includes(sep) ? rel.split(sep)[0] : '.';
}

/** @param {string} from @param {string} to */
function allowed(from, to) {
  if (from === to) return true;
  if (APART.some(([a, b]) => (from === a && to === b) || (from === b && to === a))) return false;
  const sharedTo = SHARED.indexOf(to);
  if (sharedTo !== -1) {
    const sharedFrom = SHARED.indexOf(from);
    return sharedFrom === -1 || sharedFrom < sharedTo;
  }
  const a = LAYERS.indexOf(from);
  const b = LAYERS.indexOf(to);
  return a !== -1 && b !== -1 && a < b;
}

/** @param {string} path a path under root @returns {string} it relative to root, with `/` */
function underRoot(path) {
  return relative(root, path).split(sep).join('/');
}

/** @param {string} file @param {string} target @returns {string | undefined} the fence it breaks */
function fenceBroken(file, target) {
  const from = underRoot(file);
  const to = underRoot(target);
  const fence = FENCED.find(([folder, owner]) => to.startsWith(`${folder}/`) && !from.startsWith(`${owner}/`));
  return fence && `${fence[0]}/ is private to ${fence[1]}/`;
}

/** @param {ts.Node} node */
function functionName(node) {
  const named = /** @type {{ name?: ts.Node }} */ (node).name;
  if (named && ts.isIdentifier(named)) return named.text;
  if (named && ts.isPrivateIdentifier(named)) return named.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

const breaches = [];
let files = 0;
let longestFile = { lines: 0, where: '' };
let longestFunction = { lines: 0, where: '' };

for (const file of tsFiles(root)) {
  files++;
  const text = readFileSync(file, 'utf8');
  const rel = relative(process.cwd(), file);
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > longestFile.lines) longestFile = { lines, where: rel };
  if (lines > MAX_FILE_LINES) breaches.push(`${rel}: ${lines} lines (at most ${MAX_FILE_LINES})`);
  text.split('\n').forEach((line, i) => {
    if (line.length > MAX_LINE_CHARS)
      breaches.push(`${rel}:${i + 1}: ${line.length} characters (at most ${MAX_LINE_CHARS})`);
  });

  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const from = folderOf(file);
  /** @param {ts.Node} node */
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const spec = node.moduleSpecifier.text;
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        const to = folderOf(target);
        if (!allowed(from, to))
          breaches.push(`${rel}: imports ${spec} (${from === '.' ? 'src' : from}/ may not import ${to}/)`);
        const fence = fenceBroken(file, target);
        if (fence) breaches.push(`${rel}: imports ${spec} (${fence})`);
      }
    }
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const n = end - start + 1;
      const where = `${rel}:${start + 1} ${functionName(node)}`;
      if (n > longestFunction.lines) longestFunction = { lines: n, where };
      if (n > MAX_FUNCTION_LINES) breaches.push(`${where}: ${n} lines (at most ${MAX_FUNCTION_LINES})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

for (const b of breaches) process.stdout.write(`structure: ${b}\n`);
process.stdout.write(
  `structure: ${files} files; longest file ${longestFile.lines} lines (${longestFile.where}), longest function ${longestFunction.lines} lines (${longestFunction.where}); ${breaches.length} breach(es)\n`,
);
process.exitCode = breaches.length > 0 ? 1 : 0;
