/** The `status` section: the operator's page at /status (and /status.json), and who may see it when auth is on. */
import type { FromSchema } from 'json-schema-to-ts';

export const statusSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean', default: true },
    // With auth on, a request needs a valid token (as for the MCP endpoint) whose principal is
    // listed here ("issuer subject", as the audit log names it) or that grants one of `scopes`.
    // Neither listed: nobody may see the page while auth is on.
    principals: { type: 'array', uniqueItems: true, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 2048 }, default: [] },
    scopes: { type: 'array', uniqueItems: true, maxItems: 100, items: { type: 'string', pattern: '^[!#-\\[\\]-~]{1,256}$' }, default: [] },
    // How often the HTML page reloads itself; 0: never.
    refreshSeconds: { type: 'integer', minimum: 0, maximum: 3600, default: 5 },
  },
  required: [],
  default: {},
} as const;

export type StatusConfig = FromSchema<typeof statusSchema>;
