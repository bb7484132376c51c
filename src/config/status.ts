/** The `status` section: the operator's page at /status (and /status.json), and who may see it when auth is on. */
import type { FromSchema } from 'json-schema-to-ts';

export const statusSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'GET /status (HTML for people) and /status.json (the same report for scripts): see docs/observability.md.',
  properties: {
    enabled: {
      type: 'boolean',
      default: true,
      description: 'false: neither is served. With auth off they are open, like /metrics: keep the port private.',
    },
    principals: {
      type: 'array',
      uniqueItems: true,
      maxItems: 100,
      items: { type: 'string', minLength: 1, maxLength: 2048 },
      default: [],
      description:
        'With auth on, a request needs a token the MCP endpoint would accept whose principal is listed here ' +
        '("<iss> <sub>", as the audit log names it) or that grants one of scopes; else 401 UNAUTHORIZED or 403 ' +
        'INSUFFICIENT_SCOPE. Neither listed: nobody may see the page while auth is on.',
    },
    scopes: {
      type: 'array',
      uniqueItems: true,
      maxItems: 100,
      items: { type: 'string', pattern: '^[!#-\\[\\]-~]{1,256}$' },
      default: [],
      description: 'A token granting one of these scopes may see the page (e.g. [mcpgw:admin]).',
    },
    refreshSeconds: {
      type: 'integer',
      minimum: 0,
      maximum: 3600,
      default: 5,
      description: 'How often the HTML page reloads itself; 0: never.',
    },
  },
  required: [],
  default: {},
} as const;

export type StatusConfig = FromSchema<typeof statusSchema>;
