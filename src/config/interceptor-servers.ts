/**
 * An interceptor server's `server:` as the upstream entry the gateway's own connection code takes
 * (a stdio child or a Streamable HTTP session), with the upstream schema's defaults: one worker,
 * no retries (an interceptor that failed follows onError instead), `${VAR}` expanded as for upstreams.
 */
import { configAjv } from './config-ajv.js';
import type { ServerInterceptorConfig } from './interceptors.js';
import { remoteUpstreamChecks } from './remote-upstream.js';
import { stdioUpstreamChecks } from './stdio-upstream.js';
import { upstreamsSchema, type UpstreamConfig } from './upstreams.js';

let validate: ReturnType<typeof configAjv.compile> | undefined;

/** The upstream name an interceptor server's connection reports under (logs, upstream metrics). */
export function interceptorUpstreamName(entry: { name: string }): string {
  const slug = entry.name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 48);
  return `interceptor-${slug || 'server'}`;
}

/** `problems` gets what is wrong (at `at`); the entry is still returned, for a config the checks rejected. */
export function interceptorUpstream(
  entry: ServerInterceptorConfig,
  env: NodeJS.ProcessEnv,
  problems: string[] = [],
  at = 'interceptors[]',
): UpstreamConfig {
  const s = entry.server;
  const name = interceptorUpstreamName(entry);
  const source: Record<string, unknown> =
    'command' in s
      ? { name, transport: 'stdio', command: s.command, args: s.args ?? [], env: s.env ?? {} }
      : { name, transport: 'http', url: s.url, headers: s.headers ?? {} };
  source.pool = { min: 1, max: 1 };
  validate ??= configAjv.compile(upstreamsSchema.items);
  if (!validate(source))
    problems.push(...(validate.errors ?? []).map((e) => `${at}.server${e.instancePath}: ${e.message ?? 'invalid'}`));
  const u = source as unknown as UpstreamConfig;
  if (u.transport === 'stdio') stdioUpstreamChecks(u, `${at}.server`, env, problems);
  else remoteUpstreamChecks(u, `${at}.server`, env, problems);
  return u;
}

/** What the schema cannot say. */
export function interceptorsChecks(
  list: unknown,
  where: string,
  problems: string[],
  env: NodeJS.ProcessEnv = process.env,
): void {
  if (!Array.isArray(list)) return;
  list.forEach((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null) return;
    const e = entry as Record<string, unknown>;
    if (typeof e.server === 'object' && e.server !== null && Array.isArray(e.events)) {
      // The connection the gateway will open, checked as an upstream's is (`${VAR}`, the URL).
      interceptorUpstream(entry as ServerInterceptorConfig, env, problems, `${where}[${i}]`);
      return;
    }
    if (e.server !== undefined) return;
    if (e.name === 'size' && e.maxBytes === undefined) problems.push(`${where}[${i}]: size needs maxBytes`);
    if (e.name !== 'size' && e.maxBytes !== undefined) problems.push(`${where}[${i}]: maxBytes is for size only`);
  });
}
