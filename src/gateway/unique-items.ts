/**
 * JSON Schema's `uniqueItems` in linear time. ajv compares every pair of items unless the
 * schema says they are scalars, so a 230 KB array of small objects took it 5 s, and a 4 MiB
 * body far longer: any upstream schema with `uniqueItems: true` made that a client's to send.
 * Here each item is written once in a canonical form (keys sorted, which is JSON equality) and
 * looked up in a map.
 */
import type { SchemaValidateFunction, FuncKeywordDefinition } from 'ajv';
import { isObject } from '../jsonrpc/messages.js';

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const validate: SchemaValidateFunction = (schema: unknown, data: unknown): boolean => {
  if (schema !== true || !Array.isArray(data)) return true;
  const seen = new Map<string, number>();
  for (let i = 0; i < data.length; i++) {
    const key = canonical(data[i]);
    const j = seen.get(key);
    if (j !== undefined) {
      // As ajv words it: i the later item, j the earlier.
      // ajv adds instancePath and schemaPath.
      const message = `must NOT have duplicate items (items ## ${j} and ${i} are identical)`;
      validate.errors = [{ keyword: 'uniqueItems', params: { i, j }, message }];
      return false;
    }
    seen.set(key, i);
  }
  return true;
};

export const uniqueItemsKeyword: FuncKeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  validate,
};
