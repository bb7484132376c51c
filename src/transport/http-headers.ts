/** The request headers the Streamable HTTP transport reads, what they may say, and the raw reply's hook headers. */
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpOrigin } from '../contracts/request-context.js';

export const SESSION_HEADER = 'mcp-session-id';
export const VERSION_HEADER = 'mcp-protocol-version';

/** One value of a request header (the first, if it was sent more than once). */
export function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A POST's Accept must allow both replies it may get: a JSON body or an SSE stream. */
export function acceptsPost(accept: string | undefined): boolean {
  if (!accept) return false;
  if (accept.includes('*/*')) return true;
  return accept.includes('application/json') && accept.includes('text/event-stream');
}

export function acceptsSse(accept: string | undefined): boolean {
  return !!accept && (accept.includes('text/event-stream') || accept.includes('*/*'));
}

export function isJsonContentType(ct: string | undefined): boolean {
  if (!ct) return false;
  const semi = ct.indexOf(';');
  return (semi === -1 ? ct : ct.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

/** 2025-11-25 streams start with a priming event (an id, empty data) and a retry field. */
export function primesStreams(protocolVersion: string): boolean {
  return protocolVersion >= '2025-11-25'; // revisions are dates: they order as strings
}

/** Response headers set by hooks so far (CORS), for replies written to the raw socket. */
export function hookHeaders(reply: FastifyReply): OutgoingHttpHeaders {
  return reply.getHeaders() as OutgoingHttpHeaders;
}

/** The request's id (server/access-log.ts chose it) and trace headers, for the RequestContext. */
export function httpOrigin(request: FastifyRequest): HttpOrigin {
  return {
    requestId: request.id,
    traceparent: header(request, 'traceparent'),
    tracestate: header(request, 'tracestate'),
  };
}
