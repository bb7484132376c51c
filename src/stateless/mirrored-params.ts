import type { MirroredParam } from '../contracts/mcp-handler.js';
import { isObject } from '../jsonrpc/messages.js';

/** RFC 9110 token: what a header name may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const MIRRORABLE = new Set(['string', 'integer', 'boolean']);
const MAX_DEPTH = 8;

/**
 * The `x-mcp-header` annotations of a tool's input schema: properties reached from the root
 * through `properties` alone, of type string, integer or boolean. Annotations the spec does not
 * allow are left out (clients drop such tools; the gateway does not police upstreams' schemas).
 */
export function mirroredParams(inputSchema: unknown): MirroredParam[] {
  const found: MirroredParam[] = [];
  const visit = (schema: unknown, path: string[]): void => {
    if (!isObject(schema) || !isObject(schema.properties) || path.length >= MAX_DEPTH) return;
    for (const [key, prop] of Object.entries(schema.properties)) {
      if (!isObject(prop)) continue;
      const header = prop['x-mcp-header'];
      if (
        typeof header === 'string' &&
        TOKEN.test(header) &&
        typeof prop.type === 'string' &&
        MIRRORABLE.has(prop.type)
      ) {
        found.push({ header, path: [...path, key] });
      }
      visit(prop, [...path, key]);
    }
  };
  visit(inputSchema, []);
  return found;
}
