/**
 * The `cache` section: the result cache of what 2026-07-28 upstreams say may be kept (their lists
 * and resources/read, by `ttlMs` and `cacheScope`), in each replica's memory. See docs/cache.md.
 */
import type { FromSchema } from 'json-schema-to-ts';

export const cacheSchema = {
  type: 'object',
  additionalProperties: false,
  description: "The result cache of 2026-07-28 upstreams' cacheable results, per replica: see docs/cache.md.",
  properties: {
    enabled: {
      type: 'boolean',
      default: true,
      description:
        'On: a result an upstream marks with ttlMs is kept that long (cacheScope public: for everyone; private or ' +
        'none: per principal, only with auth on). Off: every request goes upstream. 2025 upstreams are never cached.',
    },
    maxBytes: {
      type: 'integer',
      minimum: 0,
      maximum: 4 * 1024 * 1024 * 1024,
      default: 64 * 1024 * 1024,
      description:
        "All kept results together, as their JSON's length, at most (per replica); past it the least recently " +
        'used go first. A result larger than this is not kept. 0: nothing is kept.',
    },
    maxTtlMs: {
      type: 'integer',
      minimum: 0,
      maximum: 86400000,
      default: 300000,
      description:
        'The longest a result is kept, whatever its ttlMs says (a ttlMs of hours is cut to this); a negative or ' +
        'zero ttlMs, or none, is not kept at all. A list change or resource update drops it sooner. With the ' +
        "cache on, also the longest a 2026-07-28 upstream's server/discover result stands before it is asked " +
        'again (at least 1 s; cache off: 5 minutes).',
    },
  },
  required: [],
  default: {},
} as const;

export type CacheConfig = FromSchema<typeof cacheSchema>;
