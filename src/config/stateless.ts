/** The `stateless` section: cache hints on 2026-07-28 (stateless) results, and how long an input-required call waits. */
import type { FromSchema } from 'json-schema-to-ts';

export const statelessSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // server/discover and the four lists: the catalog changes only when an upstream's does
    // (listen streams hear of it at once); 0 asks clients not to cache.
    listTtlMs: { type: 'integer', minimum: 0, maximum: 86400000, default: 60000 },
    // resources/read: the gateway cannot know how fresh an upstream's resource is.
    readTtlMs: { type: 'integer', minimum: 0, maximum: 86400000, default: 0 },
    // After an input-required result: how long the upstream call waits for the client's retry.
    inputTimeoutMs: { type: 'integer', minimum: 1000, maximum: 86400000, default: 300000 },
  },
  required: [],
  default: {},
} as const;

export type StatelessConfig = FromSchema<typeof statelessSchema>;
