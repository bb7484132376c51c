/**
 * The `secrets` section: the keys that encrypt what the gateway keeps for its users (tokens of
 * upstreams, see session/token-store.ts), its type and its checks.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { substituteEnv } from './env.js';

export const secretsSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Keys that seal what the gateway keeps for its users (tokens of upstreams): see docs/auth-and-identity.md.',
  properties: {
    keys: {
      type: 'array',
      maxItems: 16,
      description:
        'AES-256-GCM keys, each 32 bytes in base64 (or a ${VAR} that expands to that; openssl rand -base64 32). The ' +
        'last one listed seals; every one listed opens what was sealed under its id: append a key to rotate, drop an ' +
        'old one once nothing sealed under it is still needed. Required with Redis sessions and a per-user grant.',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          id: {
            type: 'string',
            pattern: '^[A-Za-z0-9_-]{1,32}$',
            description: 'Written beside each record: which key opens it.',
          },
          key: { type: 'string', minLength: 1, description: 'The key: 32 bytes in base64, e.g. ${TOKEN_KEY}.' },
        },
        required: ['id', 'key'],
      },
    },
  },
  required: [],
} as const;

export type SecretsConfig = FromSchema<typeof secretsSchema>;

/** A key as the cipher takes it: its id and its 32 bytes. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

/** `${VAR}` in each key; each must then be 32 bytes of base64; ids unique. */
export function secretsChecks(secrets: SecretsConfig, env: NodeJS.ProcessEnv, problems: string[]): void {
  if (!Array.isArray(secrets.keys)) return;
  const seen = new Set<string>();
  for (const [i, k] of secrets.keys.entries()) {
    if (typeof k !== 'object' || k === null || typeof k.key !== 'string') continue;
    k.key = substituteEnv(k.key, `secrets.keys[${i}].key`, env, problems);
    if (k.key !== '' && decodeKey(k.key) === undefined)
      problems.push(`secrets.keys[${i}].key: must be 32 bytes in base64 (e.g. the output of: openssl rand -base64 32)`);
    if (seen.has(k.id)) problems.push(`secrets.keys[${i}].id: "${k.id}" is listed twice`);
    seen.add(k.id);
  }
}

/** The configured keys, decoded (after secretsChecks passed). */
export function secretKeys(secrets: SecretsConfig | undefined): SecretKey[] {
  return (secrets?.keys ?? []).map((k) => ({ id: k.id, key: decodeKey(k.key)! }));
}

function decodeKey(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text.trim())) return undefined;
  const key = Buffer.from(text.trim(), 'base64');
  return key.length === 32 ? key : undefined;
}
