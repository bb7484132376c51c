import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';

/** What 2026-07-28 lets answer with an input-required result. */
const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/**
 * A user's authorization an upstream needs first (grant authorization-code) as a 2026-07-28
 * client hears of it: -32042 is 2025-11-25's alone, so the same link comes as an input_required
 * result whose input request is a URL-mode `elicitation/create`. No requestState: the gateway
 * keeps nothing for the retry, which is a new call that finds the user's token once they
 * granted it (or gets the link again). A client that did not declare `elicitation.url` gets
 * MISSING_CLIENT_CAPABILITY, as the spec asks of a request it cannot answer.
 *
 * Returns undefined when `err` is anything else, or the request is not a stateless one.
 */
export function urlElicitationResult(err: unknown, ctx: RequestContext, method: string): McpResult | undefined {
  if (!(err instanceof GatewayError) || err.type !== 'URL_ELICITATION_REQUIRED' || !ctx.stateless) return undefined;
  if (!INPUT_REQUIRED_METHODS.has(method)) return undefined;
  const elicitation = ctx.clientCapabilities.elicitation;
  if (!isObject(elicitation) || elicitation.url === undefined) {
    throw new GatewayError(
      'MISSING_CLIENT_CAPABILITY',
      `${method} needs the client capability elicitation.url (the upstream needs the user's authorization first)`,
      {
        requiredCapabilities: { elicitation: { url: {} } },
      },
    );
  }
  const asked = Array.isArray(err.detail?.elicitations)
    ? (err.detail.elicitations as Array<Record<string, unknown>>)
    : [];
  const inputRequests: Record<string, unknown> = {};
  for (const e of asked) {
    inputRequests[String(e.elicitationId)] = {
      method: 'elicitation/create',
      params: { mode: 'url', message: e.message, url: e.url },
    };
  }
  return { resultType: 'input_required', inputRequests };
}
