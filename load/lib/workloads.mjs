// @ts-check
// autocannon request plans. Each call of a factory returns fresh counters, so the warm-up and
// the measured run are tallied apart.

import { counters, measure } from './load.mjs';
import {
  INITIALIZED_BODY,
  POST_HEADERS,
  checkCallReply,
  initializeBody,
  sessionHeaders,
  statelessCallHeaders,
  statelessToolsCallBody,
  toolsCallBody,
  verifyEchoReply,
} from './mcp.mjs';

/** Every full-parse verification looks at one reply in this many. */
const VERIFY_EVERY = 50;

/**
 * JSON-RPC ids are unique across runs of one process: a call of the warm-up that is still in
 * flight when the measured run starts must not share an id with a new call on its session.
 */
let nextId = 1;

/**
 * tools/call rotating through `sids` (one id per call, sessions round-robin); with no `sids`,
 * stateless (2026-07-28) requests that carry their own `_meta` instead of a session.
 * @param {object} o
 * @param {string} o.path
 * @param {string[] | undefined} o.sids
 * @param {string} o.tool
 * @param {Record<string, unknown>} o.args
 * @param {string} o.expectText        the text the tool result should carry (sample-verified)
 * @param {number} [o.expectProgress]  progress notifications each reply must carry (SSE)
 * @param {Record<string, string>} [o.headers]  on every call in a session (e.g. an API key's Authorization)
 * @returns {import('./load.mjs').Load}
 */
export function toolCallLoad({ path, sids, tool, args, expectText, expectProgress, headers = {} }) {
  const c = counters();
  const extra = { verified: 0, verifyFailed: 0, progressSeen: 0, sseReplies: 0 };
  c.extra = extra;
  /** @type {string[]} */
  const badSamples = [];
  let k = 0;
  const statelessHeaders = statelessCallHeaders(tool);
  const requests = [
    {
      method: 'POST',
      path,
      headers: POST_HEADERS,
      setupRequest: (/** @type {any} */ req) => {
        const id = nextId++;
        if (!sids) return { ...req, headers: statelessHeaders, body: statelessToolsCallBody(id, tool, args) };
        const sid = /** @type {string} */ (sids[k++ % sids.length]);
        return {
          ...req,
          headers: { ...sessionHeaders(sid), ...headers },
          body: toolsCallBody(id, tool, args, expectProgress ? `p${id}` : undefined),
        };
      },
      onResponse: (/** @type {number} */ status, /** @type {string} */ body) => {
        c.checked++;
        const r = checkCallReply(status, body);
        if (r.rpcError) c.rpcErrors++;
        if (body.startsWith('event:') || body.startsWith('id:') || body.startsWith(':')) extra.sseReplies++;
        extra.progressSeen += r.progress;
        const progressOk = expectProgress === undefined || r.progress === expectProgress;
        if (!r.ok || !progressOk) {
          c.bad++;
          if (badSamples.length < 3) badSamples.push(`${status} ${body.slice(0, 300)}`);
        } else if (c.checked % VERIFY_EVERY === 0) {
          if (verifyEchoReply(body, expectText)) extra.verified++;
          else {
            extra.verifyFailed++;
            if (badSamples.length < 3) badSamples.push(`${status} ${body.slice(0, 300)}`);
          }
        }
      },
    },
  ];
  return { requests, counters: c, finish: () => (badSamples.length > 0 ? { badSamples } : {}) };
}

/**
 * One session's life per iteration: initialize, notifications/initialized, tools/call echo,
 * DELETE. autocannon resets the per-connection context at the start of each iteration.
 * @param {{ path: string }} o
 * @returns {import('./load.mjs').Load}
 */
export function sessionChurnLoad({ path }) {
  const c = counters();
  const extra = { sessionsOpened: 0, sessionsDeleted: 0 };
  c.extra = extra;
  /** @type {string[]} */
  const badSamples = [];
  /** @param {number} status @param {string} body */
  const fail = (status, body) => {
    c.bad++;
    if (badSamples.length < 3) badSamples.push(`${status} ${body.slice(0, 300)}`);
  };
  /** @param {any} req @param {any} ctx @param {string} [body] */
  const withSession = (req, ctx, body) => ({
    ...req,
    headers: sessionHeaders(ctx.sid ?? 'no-session'),
    ...(body === undefined ? {} : { body }),
  });
  const requests = [
    {
      method: 'POST',
      path,
      headers: POST_HEADERS,
      body: initializeBody(1),
      onResponse: (
        /** @type {number} */ status,
        /** @type {string} */ body,
        /** @type {any} */ ctx,
        /** @type {Record<string, any>} */ headers,
      ) => {
        c.checked++;
        let sid;
        for (const [k, v] of Object.entries(headers))
          if (k.toLowerCase() === 'mcp-session-id') sid = Array.isArray(v) ? v[0] : v;
        if (status === 200 && sid && body.includes('"result":')) {
          ctx.sid = sid;
          extra.sessionsOpened++;
        } else fail(status, body);
      },
    },
    {
      method: 'POST',
      path,
      setupRequest: (/** @type {any} */ req, /** @type {any} */ ctx) => withSession(req, ctx, INITIALIZED_BODY),
      onResponse: (/** @type {number} */ status, /** @type {string} */ body) => {
        c.checked++;
        if (status !== 202) fail(status, body);
      },
    },
    {
      method: 'POST',
      path,
      setupRequest: (/** @type {any} */ req, /** @type {any} */ ctx) =>
        withSession(req, ctx, toolsCallBody(2, 'echo__echo', { text: 'churn' })),
      onResponse: (/** @type {number} */ status, /** @type {string} */ body) => {
        c.checked++;
        const r = checkCallReply(status, body);
        if (r.rpcError) c.rpcErrors++;
        if (!r.ok) fail(status, body);
      },
    },
    {
      method: 'DELETE',
      path,
      setupRequest: (/** @type {any} */ req, /** @type {any} */ ctx) => {
        const { 'content-type': _ct, accept: _accept, ...headers } = sessionHeaders(ctx.sid ?? 'no-session');
        return { ...req, headers, body: undefined };
      },
      onResponse: (/** @type {number} */ status, /** @type {string} */ body) => {
        c.checked++;
        if (status === 200) extra.sessionsDeleted++;
        else fail(status, body);
      },
    },
  ];
  return { requests, counters: c, finish: () => (badSamples.length > 0 ? { badSamples } : {}) };
}

/**
 * One measurement of the echo call load against `url`: `tool` (echo__echo) with `text` (hello),
 * over `sids` (none: 2026-07-28 stateless), at `connections` (the context's).
 * @param {import('../run.mjs').Context} ctx @param {string} url @param {string[] | undefined} sids
 * @param {Record<string, () => number[]>} meters
 * @param {{ connections?: number, tool?: string, text?: string }} [o]
 */
export function measureEcho(
  ctx,
  url,
  sids,
  meters,
  { connections = ctx.connections, tool = 'echo__echo', text = 'hello' } = {},
) {
  return measure({
    url,
    connections,
    duration: ctx.duration,
    warmup: ctx.warmup,
    makeLoad: () => toolCallLoad({ path: new URL(url).pathname, sids, tool, args: { text }, expectText: text }),
    meters,
  });
}
