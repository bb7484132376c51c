/** An upstream the gateway starts as a child process and speaks to over stdio: schema, type, checks. */
import type { FromSchema } from 'json-schema-to-ts';
import { substituteEnv } from './env.js';
import { sandboxChecks, sandboxSchema } from './sandbox.js';
import { commonUpstreamProperties, type WithoutNull } from './upstream-common.js';

export const stdioUpstreamSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...commonUpstreamProperties,
    transport: {
      type: 'string',
      const: 'stdio',
      description: 'A child process speaking JSON-RPC lines on stdin and stdout.',
    },
    command: {
      type: 'string',
      minLength: 1,
      description: 'The program: a path, or a name looked up on the PATH the child gets; ${VAR} allowed.',
    },
    args: { type: 'array', items: { type: 'string' }, default: [], description: 'Its arguments; ${VAR} allowed.' },
    env: {
      type: 'object',
      additionalProperties: { type: 'string' },
      required: [],
      default: {},
      description:
        'Its environment besides HOME LOGNAME PATH SHELL TERM USER LANG TZ TMPDIR NODE_OPTIONS, the only ones it ' +
        "inherits from the gateway; ${VAR} comes from the gateway's environment (unset is a config error).",
    },
    cwd: {
      type: 'string',
      nullable: true,
      description: "Its working directory (default: the gateway's; in a sandbox: /tmp).",
    },
    sandbox: sandboxSchema,
  },
  required: ['name', 'transport', 'command'],
} as const;

export type StdioUpstreamConfig = WithoutNull<FromSchema<typeof stdioUpstreamSchema>, 'prefix' | 'cwd'>;

/** `${VAR}` in the command, its arguments and its environment's values; its sandbox's paths. */
export function stdioUpstreamChecks(
  u: StdioUpstreamConfig,
  at: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
): void {
  if (typeof u.command === 'string') u.command = substituteEnv(u.command, `${at}.command`, env, problems);
  if (Array.isArray(u.args))
    u.args = u.args.map((a, j) => (typeof a === 'string' ? substituteEnv(a, `${at}.args[${j}]`, env, problems) : a));
  if (typeof u.env === 'object' && u.env !== null) {
    for (const [k, v] of Object.entries(u.env))
      if (typeof v === 'string') u.env[k] = substituteEnv(v, `${at}.env.${k}`, env, problems);
  }
  if (typeof u.sandbox === 'object' && u.sandbox !== null) sandboxChecks(u.sandbox, u, at, problems);
}
