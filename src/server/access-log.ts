/**
 * Request ids and the access log. Every request gets an id: the client's `x-request-id` when it
 * is short and plain, else one made up; it goes back in the reply's `x-request-id` and is on
 * every line Fastify's request logger writes (`reqId`), the access line and audit lines too.
 *
 * The access log: one line per HTTP request, at info, when the reply has ended: method, path
 * (no query string), status, what the body carried (`data.type`, and the JSON-RPC method), how
 * long it took and who asked. Never a body, a header value or a query: those may hold anything.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { subscribe } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Bounded and plain, so that a client's id cannot forge or bloat a log line. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:~+=/-]{1,128}$/;

/** The request id a client sent, when it is safe to log and echo; undefined otherwise. */
export function clientRequestId(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v !== undefined && SAFE_REQUEST_ID.test(v) ? v : undefined;
}

/** Fastify's request id options: ours, not its header handling (which takes any value). */
export function requestIdOptions(): Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader'> {
  return {
    requestIdHeader: false,
    genReqId: (req: IncomingMessage) => clientRequestId(req.headers[REQUEST_ID_HEADER]) ?? randomUUID(),
  };
}

interface Classified {
  type: string;
  method: string | undefined;
  principal: string | undefined;
}

/**
 * The reply header on every request, and the access log when `log` writes info lines (a quieter
 * `logLevel` turns it off: nothing is then subscribed or kept). Returns the unsubscribe.
 */
export function registerAccessLog(app: FastifyInstance, gateway: string, log: Logger): () => void {
  app.addHook('onRequest', (request, reply, done) => {
    // Before any route runs: replies written to the raw socket (SSE) take the hook headers too.
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  if (!log.isLevelEnabled('info')) return () => undefined;
  // The access line's fields are the gateway's own (no header, body or query value), so it skips the
  // logger's redaction: its wildcard paths (`*.token`) cost about 2 µs a line, one line per request.
  const access = log.child({}, { redact: { paths: [] } });
  // What the transport learnt of each request, until its reply ends (keyed by Node's request object).
  const classified = new WeakMap<object, Classified>();
  const unsubscribe = subscribe(gateway, {
    'http:classified': (e) =>
      void classified.set(e.request, { type: e.type, method: e.method, principal: e.principal }),
  });
  app.addHook('onResponse', (request, reply, done) => {
    const c = classified.get(request.raw);
    const url = request.url;
    const query = url.indexOf('?');
    access.info(
      {
        reqId: request.id,
        method: request.method,
        path: query === -1 ? url : url.slice(0, query),
        status: reply.statusCode,
        ...(c ? { data: c.method === undefined ? { type: c.type } : { type: c.type, method: c.method } } : {}),
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        ...(c?.principal !== undefined ? { principal: c.principal } : {}),
      },
      'access',
    );
    done();
  });
  return unsubscribe;
}
