/**
 * Unknown-field check for Kubernetes objects. kubernetes-models' validate() checks types,
 * enums and required fields, but (like the OpenAPI schemas it is generated from) accepts any
 * unknown key, so a misspelt `readOnlyRootFileSystem` would pass it and only fail at
 * `kubectl apply` (strict field validation). This walks an object along the interfaces in
 * kubernetes-models' own .d.ts files and names every key that no interface declares.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ROOT } from './support.js';

const NODE_MODULES = resolve(ROOT, 'node_modules');

interface Shape {
  props: Map<string, string>; // property name -> its type expression
  file: string;
}

const shapes = new Map<string, Shape | null>();

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** The interface declared in a .d.ts file, or null when the file declares a plain type alias. */
function shapeOf(file: string): Shape | null {
  const cached = shapes.get(file);
  if (cached !== undefined) return cached;
  const text = stripComments(readFileSync(file, 'utf8'));
  const start = text.search(/export interface \w+(?: extends [\w, ]+)? \{/);
  if (start < 0) {
    shapes.set(file, null);
    return null;
  }
  const props = new Map<string, string>();
  let i = text.indexOf('{', start) + 1;
  const prop = /\s*"([^"]+)"\??:\s*/y;
  for (;;) {
    while (/\s/.test(text[i] ?? '')) i++;
    if (text[i] === '}' || i >= text.length) break;
    prop.lastIndex = i;
    const m = prop.exec(text);
    if (!m) throw new Error(`${file}: cannot read the interface near ${JSON.stringify(text.slice(i, i + 40))}`);
    i = prop.lastIndex;
    let depth = 0;
    const from = i;
    for (; i < text.length; i++) {
      const c = text[i];
      if (c === '{' || c === '<' || c === '(') depth++;
      else if (c === '}' || c === '>' || c === ')') depth--;
      else if (c === ';' && depth === 0) break;
    }
    props.set(m[1] as string, text.slice(from, i).trim());
    i++;
  }
  const shape = { props, file };
  shapes.set(file, shape);
  return shape;
}

/** The file an imported type name comes from, relative to the importing .d.ts. */
function importedFile(fromFile: string, typeName: string): string | undefined {
  const text = readFileSync(fromFile, 'utf8');
  const m = new RegExp(`import \\{[^}]*\\b${typeName}\\b[^}]*\\} from "([^"]+)"`).exec(text);
  if (!m) return undefined;
  const spec = m[1] as string;
  const base = spec.startsWith('.') ? resolve(dirname(fromFile), spec) : resolve(NODE_MODULES, spec);
  return existsSync(`${base}.d.ts`) ? `${base}.d.ts` : undefined;
}

function checkValue(value: unknown, type: string, file: string, at: string, problems: string[]): void {
  if (value === null || typeof value !== 'object') return;
  type = type.trim();
  const array = /^Array<([\s\S]+)>$/.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((v, j) => checkValue(v, array[1] as string, file, `${at}[${j}]`, problems));
    return;
  }
  const map = /^\{\s*\[key: string\]:\s*([\s\S]+?);?\s*\}$/.exec(type);
  if (map) {
    for (const [k, v] of Object.entries(value)) checkValue(v, map[1] as string, file, `${at}.${k}`, problems);
    return;
  }
  if (/^I\w+$/.test(type)) {
    const target = importedFile(file, type);
    if (target) checkObject(value as Record<string, unknown>, target, at, problems);
  }
  // Anything else (primitives, unions of literals, aliases such as IntOrString) has no keys.
}

function checkObject(obj: Record<string, unknown>, file: string, at: string, problems: string[]): void {
  const shape = shapeOf(file);
  if (!shape || Array.isArray(obj)) return;
  for (const [key, value] of Object.entries(obj)) {
    const type = shape.props.get(key);
    const where = at ? `${at}.${key}` : key;
    if (type === undefined) problems.push(`${where}: unknown field`);
    else checkValue(value, type, file, where, problems);
  }
}

/**
 * Unknown fields of `obj`, checked against kubernetes-models' declaration of its kind
 * (`group/version/Kind` folder layout, e.g. apps/v1/Deployment). Throws if the kind is unknown.
 */
export function unknownFields(obj: { apiVersion: string; kind: string }): string[] {
  const file = resolve(NODE_MODULES, 'kubernetes-models', obj.apiVersion, `${obj.kind}.d.ts`);
  if (!existsSync(file)) throw new Error(`kubernetes-models has no declaration for ${obj.apiVersion} ${obj.kind}`);
  const problems: string[] = [];
  checkObject(obj as unknown as Record<string, unknown>, file, '', problems);
  return problems;
}
