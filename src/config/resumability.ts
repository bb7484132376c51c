/** The `resumability` section: recorded SSE events, for clients that resume a stream (GET with Last-Event-ID). */
import type { FromSchema } from 'json-schema-to-ts';

export const resumabilitySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Per stream: the oldest events go first (Redis trims approximately: MAXLEN ~).
    maxEvents: { type: 'integer', minimum: 1, maximum: 1000000, default: 1000 },
    // Events older than this are dropped, and a stream unused this long is dropped whole.
    maxAgeSeconds: { type: 'integer', minimum: 1, default: 300 },
    // Sent as the SSE `retry` field with each 2025-11-25 priming event.
    retryMs: { type: 'integer', minimum: 0, maximum: 600000, default: 1000 },
  },
  required: [],
  default: {},
} as const;

export type ResumabilityConfig = FromSchema<typeof resumabilitySchema>;
