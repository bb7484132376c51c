import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import type { Caller, RequestContext } from '../contracts/request-context.js';
import type { CallOptions, McpResult } from '../contracts/upstream.js';
import { urlElicitationResult } from '../stateless/url-elicitation.js';
import type { CatalogManager } from './catalog-manager.js';
import type { PerSessionRouter } from './per-session-router.js';
import type { UpstreamEntry } from './upstream-entry.js';

interface Parts {
  catalogs: CatalogManager;
  perSession: PerSessionRouter;
  upstreams: ReadonlyMap<string, UpstreamEntry>;
}

/**
 * An upstream that lists only per user (per-session workers opened as each user), not yet in
 * the catalog: this client's worker for it is opened (as its user) and the catalog comes from
 * it. Whether the catalog changed. A user it refuses for want of their authorization
 * (authorization-code, no token yet): a client that takes URL elicitations (2025-11-25,
 * elicitation.url) gets that -32042 instead of a list that could never show the upstream (the
 * list cannot be answered for them until they grant it); any other lists without it.
 */
export async function openUserWorkers(
  ctx: RequestContext,
  { catalogs, perSession, upstreams }: Parts,
): Promise<boolean> {
  // (A stateless request's scope lives for that request: its worker would serve nothing else.)
  if (!ctx.caller || ctx.stateless) return false;
  let asked: GatewayError | undefined;
  const opening = [...upstreams]
    .filter(([name, entry]) => entry.opensPerUser === true && !catalogs.listed(name))
    .map(([name]) =>
      perSession
        .call(ctx, name, 'ping', undefined, undefined, () => undefined)
        .then(() => catalogs.refreshNow(name))
        .then(
          () => catalogs.listed(name),
          (err: unknown) => {
            if (err instanceof GatewayError && err.type === 'URL_ELICITATION_REQUIRED') asked ??= err;
            return false;
          },
        ),
    );
  const changed = opening.length > 0 && (await Promise.all(opening)).some(Boolean);
  if (!changed && asked && takesUrlElicitations(ctx)) throw asked;
  return changed;
}

/** A 2025 session whose client declared elicitation.url: -32042 is for it (2025-11-25). */
function takesUrlElicitations(ctx: RequestContext): boolean {
  const elicitation = ctx.clientCapabilities.elicitation;
  return isObject(elicitation) && elicitation.url !== undefined;
}

/** The caller, with the 2025 session it calls from (a stateless request has none to be told things on). */
function sessionCaller(ctx: RequestContext): Caller | undefined {
  return ctx.caller && !ctx.stateless ? { ...ctx.caller, session: ctx.scope } : ctx.caller;
}

/**
 * A shared worker's call options, with whose share it counts against (the pool's queue takes
 * turns between clients) and who it is for (auth on): an upstream that acts for users calls as them.
 */
export function sharedCallOptions<O extends CallOptions>(
  ctx: RequestContext,
  options: O | undefined,
): O | (O & { caller?: Caller }) | undefined {
  const caller = sessionCaller(ctx);
  if (!caller && ctx.client === undefined) return options;
  return { ...(options as O), ...(caller ? { caller } : {}), client: ctx.client };
}

/**
 * A call's failure, or the result it becomes: a user's authorization an upstream needs first,
 * as a 2026-07-28 client is asked for it (an input_required URL elicitation).
 */
export function orUrlElicitation(err: unknown, ctx: RequestContext, method: string): McpResult {
  const asked = urlElicitationResult(err, ctx, method);
  if (asked === undefined) throw err;
  return asked;
}
