/**
 * The `stateless` section: cache hints on 2026-07-28 (stateless) results, and how long an input-required call waits.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { substituteEnv } from './env.js';

export const statelessSchema = {
  type: 'object',
  additionalProperties: false,
  description: '2026-07-28 (stateless) requests and upstreams: see docs/eras.md.',
  properties: {
    listTtlMs: {
      type: 'integer',
      minimum: 0,
      maximum: 86400000,
      default: 60000,
      description:
        'server/discover and the four lists: their ttlMs (cacheScope public). The catalog changes only when an ' +
        "upstream's does (listen streams hear of it at once); 0 asks clients not to cache.",
    },
    readTtlMs: {
      type: 'integer',
      minimum: 0,
      maximum: 86400000,
      default: 0,
      description:
        "resources/read: its ttlMs (cacheScope private); the gateway cannot know how fresh an upstream's resource " +
        'is.',
    },
    inputTimeoutMs: {
      type: 'integer',
      minimum: 1000,
      maximum: 86400000,
      default: 300000,
      description:
        "After an input_required result, how long the per-session upstream call waits for the client's retry; " +
        'then it is cancelled.',
    },
    stateSecret: {
      type: 'string',
      minLength: 32,
      description:
        'The HMAC-SHA256 key (at least 32 characters after ${VAR} expansion, e.g. "${MCP_STATE_SECRET}") of the ' +
        "requestState the gateway wraps around a 2026-07-28 upstream's, and (prefixed) of the upstream task ids it " +
        'wraps. Unset: random per process, so a retry must reach the replica that answered. Replicas behind one load ' +
        'balancer need the same one.',
    },
    stateTtlMs: {
      type: 'integer',
      minimum: 1000,
      maximum: 86400000,
      default: 600000,
      description: 'How long such a requestState stays valid (each one is single-use).',
    },
    maxInputRounds: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 10,
      description:
        'input_required rounds one request to a 2026-07-28 upstream may take; more: INPUT_ROUNDS_EXCEEDED (an ' +
        'upstream that loops).',
    },
  },
  required: [],
  default: {},
} as const;

export type StatelessConfig = FromSchema<typeof statelessSchema>;

/** `${VAR}` in the state secret, which must still be 32 characters or more once expanded. */
export function statelessChecks(stateless: StatelessConfig, env: NodeJS.ProcessEnv, problems: string[]): void {
  if (typeof stateless.stateSecret !== 'string') return;
  stateless.stateSecret = substituteEnv(stateless.stateSecret, 'stateless.stateSecret', env, problems);
  if (stateless.stateSecret.length < 32)
    problems.push('stateless.stateSecret: must be at least 32 characters (after ${VAR} expansion)');
}
