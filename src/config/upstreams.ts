/** The `upstreams` list: its schema (one per transport, chosen by `transport`), its type, its checks. */
import { remoteUpstreamChecks, remoteUpstreamSchema, type HttpUpstreamConfig } from './remote-upstream.js';
import { stdioUpstreamChecks, stdioUpstreamSchema, type StdioUpstreamConfig } from './stdio-upstream.js';
import { commonUpstreamChecks, dropNullKeys, protocolVersionChecks } from './upstream-common.js';

export const upstreamsSchema = {
  type: 'array',
  description:
    'The MCP servers behind the gateway, at least one; merged into one catalog in the order of their names. See ' +
    'docs/upstreams.md.',
  // One schema per transport, chosen by `transport`: errors name the keys of that one only.
  items: {
    type: 'object',
    properties: {
      transport: {
        type: 'string',
        enum: ['stdio', 'http', 'sse'],
        description: 'stdio: a child process; http: Streamable HTTP; sse: the 2024-11-05 HTTP+SSE transport.',
      },
    },
    required: ['transport'],
    discriminator: { propertyName: 'transport' },
    oneOf: [stdioUpstreamSchema, remoteUpstreamSchema],
  },
  minItems: 1,
} as const;

export type UpstreamConfig = StdioUpstreamConfig | HttpUpstreamConfig;

/** Names are unique; each upstream's own checks. Run on a list the schema may have rejected, so guarded. */
export function upstreamsChecks(upstreams: unknown, env: NodeJS.ProcessEnv, problems: string[]): void {
  const names = new Map<string, number>();
  (Array.isArray(upstreams) ? (upstreams as UpstreamConfig[]) : []).forEach((u, i) => {
    if (typeof u !== 'object' || u === null) return; // (the schema errors already name it)
    const at = `upstreams[${i}]`;
    const seen = names.get(u.name);
    if (seen !== undefined) problems.push(`${at}.name: "${u.name}" is already used by upstreams[${seen}]`);
    names.set(u.name, i);
    dropNullKeys(u, ['prefix', 'cwd']);
    commonUpstreamChecks(u, at, problems);
    protocolVersionChecks(u, at, problems);
    if (u.transport !== 'stdio' && 'sandbox' in u)
      problems.push(`${at}.sandbox: only a stdio upstream runs in a sandbox (this one is ${u.transport})`);
    if (u.transport !== 'stdio') remoteUpstreamChecks(u, at, env, problems);
    else stdioUpstreamChecks(u, at, env, problems);
  });
}
