/**
 * What the gateway logs: the level, how often a repeated upstream failure is logged, and which requests are audited.
 */

export const logLevelSchema = {
  type: 'string',
  enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
  default: 'info',
  description:
    "The log's level (MCPGW_LOG_LEVEL overrides it). At info and below each HTTP request gets an access line; " +
    'warn writes none.',
} as const;

export const logRepeatMsSchema = {
  type: 'integer',
  minimum: 100,
  default: 60000,
  description:
    "An upstream's repeated failure (failed starts, crashes, non-JSON stdout lines) is logged the first time, then " +
    'at most once per this interval, each line with suppressed: how many were left out.',
} as const;

export const auditSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'The audit log: see docs/observability.md.',
  properties: {
    methods: {
      type: 'array',
      uniqueItems: true,
      items: {
        type: 'string',
        enum: [
          'tools/call',
          'prompts/get',
          'resources/read',
          'resources/subscribe',
          'completion/complete',
          'tools/list',
          'prompts/list',
          'resources/list',
        ],
      },
      default: [],
      description:
        'Requests of these methods get one audit log line each (who, what, outcome, duration; never arguments or ' +
        'results), at info whatever logLevel says. None by default.',
    },
  },
  required: [],
  default: {},
} as const;
