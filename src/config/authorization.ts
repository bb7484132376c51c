/**
 * The `authorization` section: a Cedar policy file every request is decided by (policy/,
 * docs/policy.md). The file is compiled where the policy is built (start-up, --check, each
 * reload), not here: config/ may not import the policy layer.
 */
import type { FromSchema } from 'json-schema-to-ts';

export const authorizationSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'An authorization policy in Cedar (see docs/policy.md): each tool call, prompt, resource read, list and task ' +
    'operation is decided by it before routing, and lists show only what it could allow. Unset: no policy.',
  properties: {
    policyFile: {
      type: 'string',
      minLength: 1,
      description:
        "The Cedar policy file, validated against the gateway's schema at load: one that does not parse or " +
        'validate is refused (start-up, --check) with its line and column, and a reload keeps the running policy. ' +
        'Every reload (SIGHUP, a change of the config file or, with reload.watch, of this file) reads it again. ' +
        'What no policy permits is denied.',
    },
  },
  required: [],
} as const;

export type AuthorizationConfig = FromSchema<typeof authorizationSchema>;
