/** An upstream the gateway starts as a child process and speaks to over stdio: schema, type, checks. */
import type { FromSchema } from 'json-schema-to-ts';
import { substituteEnv } from './env.js';
import { commonUpstreamProperties, type WithoutNull } from './upstream-common.js';

export const stdioUpstreamSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...commonUpstreamProperties,
    transport: { type: 'string', const: 'stdio' },
    command: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' }, default: [] },
    env: { type: 'object', additionalProperties: { type: 'string' }, required: [], default: {} },
    cwd: { type: 'string', nullable: true },
  },
  required: ['name', 'transport', 'command'],
} as const;

export type StdioUpstreamConfig = WithoutNull<FromSchema<typeof stdioUpstreamSchema>, 'prefix' | 'cwd'>;

/** `${VAR}` in the command, its arguments and its environment's values. */
export function stdioUpstreamChecks(u: StdioUpstreamConfig, at: string, env: NodeJS.ProcessEnv, problems: string[]): void {
  if (typeof u.command === 'string') u.command = substituteEnv(u.command, `${at}.command`, env, problems);
  if (Array.isArray(u.args)) u.args = u.args.map((a, j) => (typeof a === 'string' ? substituteEnv(a, `${at}.args[${j}]`, env, problems) : a));
  if (typeof u.env === 'object' && u.env !== null) {
    for (const [k, v] of Object.entries(u.env)) if (typeof v === 'string') u.env[k] = substituteEnv(v, `${at}.env.${k}`, env, problems);
  }
}
