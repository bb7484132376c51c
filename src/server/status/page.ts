/**
 * GET /status (HTML for people) and GET /status.json (the same report for scripts). With auth
 * on, each request needs a token the MCP endpoint would accept whose principal is one of
 * `status.principals` or that grants one of `status.scopes`: the page names every upstream and
 * tool, which an ordinary client need not learn.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StatusConfig } from '../../config/schema.js';
import type { Authenticator } from '../../contracts/authenticator.js';
import { AuthChallenge } from '../../jsonrpc/errors.js';
import type { DataPathEvents } from '../../observability/events.js';
import { replyWithFailure } from '../../transport/error-reply.js';
import { gatherStatus, type StatusSources } from './report.js';
import { renderStatusPage } from './view.js';
import { PAGE_HEADERS } from '../page-headers.js';

export interface StatusPageOptions {
  config: StatusConfig;
  /** The MCP endpoint's authenticator; absent when auth is off (then the page is open, like /metrics). */
  auth?: Authenticator;
  diagnostics: DataPathEvents;
  sources: StatusSources;
}

export function registerStatusPage(app: FastifyInstance, options: StatusPageOptions): void {
  const { config, auth, diagnostics, sources } = options;
  if (!config.enabled) return;
  const admins = new Set(config.principals);
  const scopeHint = config.scopes.length > 0 ? `, scope="${config.scopes.join(' ')}"` : '';

  /** true when the request may see the page; otherwise the error reply has been sent. */
  const admitted = async (request: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    if (!auth) return true;
    try {
      const identity = await auth.authenticate(request.headers.authorization);
      if (admins.has(identity.principal) || config.scopes.some((s) => identity.scopes.has(s))) return true;
      throw new AuthChallenge(
        'INSUFFICIENT_SCOPE',
        'Forbidden: /status needs an admin principal (status.principals) or scope (status.scopes)',
        `Bearer error="insufficient_scope"${scopeHint}`,
      );
    } catch (err) {
      replyWithFailure(reply, diagnostics, err);
      return false;
    }
  };

  app.get('/status', async (request, reply) => {
    if (!(await admitted(request, reply))) return reply;
    const html = renderStatusPage(await gatherStatus(sources), config.refreshSeconds);
    return reply.headers(PAGE_HEADERS).header('content-type', 'text/html; charset=utf-8').send(html);
  });

  app.get('/status.json', async (request, reply) => {
    if (!(await admitted(request, reply))) return reply;
    return reply
      .headers(PAGE_HEADERS)
      .header('content-type', 'application/json; charset=utf-8')
      .send(JSON.stringify(await gatherStatus(sources)));
  });
}
