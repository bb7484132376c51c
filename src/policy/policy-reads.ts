// What a set of policies can read of a request, found once at load in each policy's Cedar AST
// (policyToJson): the decision cache (decision-cache.ts) keys a decision by exactly these inputs.
// Cedar reads an entity only through an attribute (`.attr`, `has attr`), a tag (hasTag, getTag)
// or its uid (==, in, is: the principal's and resource's uids are always in the key; no entity
// has parents). So the names of every attribute and tag used anywhere, on whatever entity, cover
// the entities; the context is a record and is read by its attributes, or as a whole when the
// `context` variable is used any other way (then every attribute counts as read).
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';

/** Names read anywhere in the policies; 'all': some read could not be pinned to a name. */
export interface PolicyReads {
  /** Attribute names read with `.` or `has` on any entity or record but the context itself. */
  readonly attrs: ReadonlySet<string>;
  /** Tag keys read with hasTag/getTag (claims and arguments alike); 'all' when a key is computed. */
  readonly tags: ReadonlySet<string> | 'all';
  /** Context attributes read; 'all' when `context` is used as a whole value. */
  readonly context: ReadonlySet<string> | 'all';
}

type Node = Record<string, unknown>;

interface Found {
  attrs: Set<string>;
  tags: Set<string> | 'all';
  context: Set<string> | 'all';
}

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

function isContext(expr: unknown): boolean {
  return isNode(expr) && expr.Var === 'context';
}

/** Walks one expression of the AST (policyToJson's form), noting what it reads into `found`. */
function walk(expr: unknown, found: Found): void {
  if (Array.isArray(expr)) {
    for (const e of expr) walk(e, found);
    return;
  }
  if (!isNode(expr) || 'Value' in expr) return; // a constant (entity literals are read by attribute names)
  if (isContext(expr)) {
    found.context = 'all'; // `context` as a value: reached here only outside `.`/`has` below
    return;
  }
  for (const [op, body] of Object.entries(expr)) {
    if ((op === '.' || op === 'has') && isNode(body) && typeof body.attr === 'string') {
      if (!isContext(body.left)) {
        found.attrs.add(body.attr);
        walk(body.left, found);
      } else if (found.context !== 'all') found.context.add(body.attr);
    } else if ((op === 'hasTag' || op === 'getTag') && isNode(body)) {
      const key = isNode(body.right) ? body.right.Value : undefined;
      if (typeof key === 'string' && found.tags !== 'all') found.tags.add(key);
      else found.tags = 'all';
      walk(body.left, found);
      walk(body.right, found);
    } else if (op === 'Record' && isNode(body)) {
      for (const value of Object.values(body)) walk(value, found); // its keys are names, not operators
    } else walk(body, found);
  }
}

/**
 * What `policies` (each one policy's text) read. A policy the AST cannot be had of reads the whole
 * context (its epoch too: nothing of such a set is cached).
 */
export function readsOf(policies: readonly string[]): PolicyReads {
  const found: Found = { attrs: new Set(), tags: new Set(), context: new Set() };
  for (const policy of policies) {
    const parsed = cedar.policyToJson(policy);
    if (parsed.type !== 'success') return { attrs: found.attrs, tags: 'all', context: 'all' };
    for (const condition of parsed.json.conditions) walk(condition.body, found);
  }
  return found;
}
