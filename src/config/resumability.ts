/** The `resumability` section: recorded SSE events, for clients that resume a stream (GET with Last-Event-ID). */
import type { FromSchema } from 'json-schema-to-ts';

export const resumabilitySchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Recorded SSE events, for clients that resume a stream (GET with Last-Event-ID): in Redis with ' +
    'sessions.store redis, else in memory.',
  properties: {
    maxEvents: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000,
      default: 1000,
      description: 'Events kept per stream, the oldest dropped first (Redis trims approximately: MAXLEN ~).',
    },
    maxAgeSeconds: {
      type: 'integer',
      minimum: 1,
      default: 300,
      description:
        'Events older than this are dropped, and a stream unused this long is dropped whole; a resume past it gets ' +
        '400 EVENT_ID_UNKNOWN.',
    },
    retryMs: {
      type: 'integer',
      minimum: 0,
      maximum: 600000,
      default: 1000,
      description: 'The SSE retry field sent with each 2025-11-25 priming event.',
    },
  },
  required: [],
  default: {},
} as const;

export type ResumabilityConfig = FromSchema<typeof resumabilitySchema>;
