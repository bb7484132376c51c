/** What the gateway logs: the level, how often a repeated upstream failure is logged, and which requests are audited. */

export const logLevelSchema = { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' } as const;

// A repeated upstream failure is logged the first time, then at most once per this many ms, with a count.
export const logRepeatMsSchema = { type: 'integer', minimum: 100, default: 60000 } as const;

// Requests of these methods get one audit log line each (none by default).
export const auditSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    methods: {
      type: 'array',
      uniqueItems: true,
      items: { type: 'string', enum: ['tools/call', 'prompts/get', 'resources/read', 'resources/subscribe', 'completion/complete', 'tools/list', 'prompts/list', 'resources/list'] },
      default: [],
    },
  },
  required: [],
  default: {},
} as const;
