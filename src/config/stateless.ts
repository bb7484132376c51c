/** The `stateless` section: cache hints on 2026-07-28 (stateless) results, and how long an input-required call waits. */
import type { FromSchema } from 'json-schema-to-ts';
import { substituteEnv } from './env.js';

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
    // Signs the requestState the gateway wraps around a 2026-07-28 upstream's (HMAC-SHA256).
    // Unset: a random secret per process, so a retry must reach the replica that issued the
    // state; replicas behind one load balancer need the same secret (e.g. "${MCP_STATE_SECRET}").
    stateSecret: { type: 'string', minLength: 32 },
    // How long such a state stays valid, and how many input_required rounds one request may take.
    stateTtlMs: { type: 'integer', minimum: 1000, maximum: 86400000, default: 600000 },
    maxInputRounds: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
  },
  required: [],
  default: {},
} as const;

export type StatelessConfig = FromSchema<typeof statelessSchema>;

/** `${VAR}` in the state secret, which must still be 32 characters or more once expanded. */
export function statelessChecks(stateless: StatelessConfig, env: NodeJS.ProcessEnv, problems: string[]): void {
  if (typeof stateless.stateSecret !== 'string') return;
  stateless.stateSecret = substituteEnv(stateless.stateSecret, 'stateless.stateSecret', env, problems);
  if (stateless.stateSecret.length < 32) problems.push('stateless.stateSecret: must be at least 32 characters (after ${VAR} expansion)');
}
