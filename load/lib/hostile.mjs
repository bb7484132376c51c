// @ts-check
// Hostile clients for the soak and the hostile-mix bench: each vector is a loop that plays one
// client of issue 27's list against a running gateway, over and over, until told to stop. Every
// reply the gateway gives is checked: a JSON-RPC result or an error of the table ("typed"), or
// anything else ("untyped", which fails a soak). The streams the gateway cut off are counted from
// its own metric (a client that stops reading cannot see its socket close).
//
// The gateway must front `echo` (examples/echo, tasks on for `echo`), `slow` (examples/slow) and
// `everything` (server-everything, per-session, a short timeoutMs): see HOSTILE_UPSTREAMS.
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { ECHO_SERVER, ROOT, SLOW_SERVER } from './gateway.mjs';
import { POST_HEADERS, deleteSession, initializeBody, INITIALIZED_BODY } from './mcp.mjs';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
/** The error table of the built gateway: a reply's `data.type` must name one of its entries. */
const { ERRORS } = await import(`${ROOT}/dist/jsonrpc/errors.js`);

/**
 * BENCH_HOSTILE_FAIRNESS=N: each client address's share of the echo and everything upstreams (`upstreams[].fairness`,
 * maxInFlightPerPrincipal N; the hostile clients connect from their own address). Unset: none. With 8 or 4 it did not
 * lower the legitimate clients' p99 here (2026-12-04: the tail is CPU on 2 cores, not waiting for a worker).
 */
const FAIRNESS = process.env.BENCH_HOSTILE_FAIRNESS
  ? { fairness: { maxInFlightPerPrincipal: Number(process.env.BENCH_HOSTILE_FAIRNESS), queue: 32 } }
  : {};

/** The upstreams every vector needs, as load/lib/gateway.mjs takes them. */
export const HOSTILE_UPSTREAMS = [
  {
    name: 'echo',
    script: ECHO_SERVER,
    tasks: { tools: ['echo'] },
    pool: { min: 1, max: 4, maxInFlight: 32 },
    ...FAIRNESS,
  },
  { name: 'slow', script: SLOW_SERVER },
  {
    name: 'everything',
    script: EVERYTHING,
    args: ['stdio'],
    mode: /** @type {const} */ ('per-session'),
    pool: { min: 0, max: 4, maxInFlight: 8 },
    timeoutMs: 3000,
    ...FAIRNESS,
  },
];

const MB = 1024 * 1024;
/** The loopback address the clients connect from (HOSTILE_LOCAL_ADDRESS; the system's choice when unset). */
const LOCAL_ADDRESS = process.env.HOSTILE_LOCAL_ADDRESS;
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @typedef {{ sent: number, typed: number, untyped: number, samples: string[] }} Tally
 * @typedef {{ base: string, url: string, stopped: () => boolean, tally: Tally }} Ctx
 */

/** @param {Tally} t @param {number} status @param {string} text */
function judge(t, status, text) {
  t.sent++;
  if (status === 202 && text.length < 16) return void t.typed++;
  if (isTyped(status, text)) return void t.typed++;
  t.untyped++;
  if (t.samples.length < 5) t.samples.push(`${status} ${text.slice(0, 200)}`);
}

/** A JSON body (or SSE stream) of JSON-RPC messages whose errors name the table and its status. */
function isTyped(status, text) {
  const datas = text.trimStart().startsWith('{')
    ? [text]
    : text
        .split('\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => l.slice(6));
  if (datas.length === 0) return false;
  for (const d of datas) {
    let m;
    try {
      m = JSON.parse(d);
    } catch {
      return false;
    }
    if (m?.jsonrpc !== '2.0') return false;
    if (!m.error) continue;
    const entry = ERRORS[m.error.data?.type];
    if (status !== 200 && (!entry || entry.httpStatus !== status || entry.code !== m.error.code)) return false;
  }
  return true;
}

/** @param {Ctx} c @param {string | undefined} sid @param {string} body @param {string} [version] */
async function post(c, sid, body, version = '2025-06-18') {
  const headers = sid ? { ...POST_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': version } : POST_HEADERS;
  try {
    const res = await fetch(c.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    judge(c.tally, res.status, text);
    return { status: res.status, text, sid: res.headers.get('mcp-session-id') ?? undefined };
  } catch (err) {
    c.tally.sent++;
    c.tally.untyped++;
    if (c.tally.samples.length < 5) c.tally.samples.push(`no reply: ${String(err)}`);
    return { status: 0, text: '', sid: undefined };
  }
}

/** @param {Ctx} c @param {string} version @param {Record<string, unknown>} capabilities */
async function session(c, version = '2025-06-18', capabilities = {}) {
  const init = JSON.parse(initializeBody(0));
  init.params.protocolVersion = version;
  init.params.capabilities = capabilities;
  const r = await post(c, undefined, JSON.stringify(init));
  if (!r.sid) return undefined;
  await post(c, r.sid, INITIALIZED_BODY, version);
  return r.sid;
}

/** @param {number} id @param {string} name @param {Record<string, unknown>} args @param {Record<string, unknown>} [extra] */
const call = (id, name, args, extra = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...extra } });

/**
 * A raw HTTP/1.1 request on its own socket. `paused`: after `readUntil` appears in what came back,
 * stop reading (a client that never reads again). Resolves when the gateway closes the socket
 * (`cut`) or after `holdMs`.
 * @param {Ctx} c @param {string} head @param {{ body?: string, readUntil?: RegExp, holdMs: number, reset?: boolean }} o
 */
function rawRequest(c, head, o) {
  const { hostname, port } = new URL(c.base);
  return new Promise((resolve) => {
    const socket = connect({
      port: Number(port),
      host: hostname,
      ...(LOCAL_ADDRESS ? { localAddress: LOCAL_ADDRESS } : {}),
    });
    let seen = '';
    let cut = false;
    const until = Date.now() + o.holdMs;
    const timer = setInterval(() => (c.stopped() || Date.now() > until) && socket.destroy(), 100);
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      socket.write(head + (o.body ?? ''));
      if (o.reset) socket.resetAndDestroy();
    });
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      if (o.readUntil) {
        const m = o.readUntil.exec(seen);
        if (m) {
          socket.pause();
          socket.removeAllListeners('data');
          resolve({ match: m, closed: new Promise((done) => socket.once('close', () => done(cut))) });
        }
      }
    });
    socket.on('end', () => (cut = true));
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ match: undefined, closed: Promise.resolve(cut) });
    });
  });
}

/** @param {string} method @param {string} path @param {string} host @param {Record<string, string>} headers @param {string} [body] */
function httpHead(method, path, host, headers, body) {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `host: ${host}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  if (body !== undefined) lines.push(`content-length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * The vectors, by name. Each takes the context and returns when `c.stopped()` is true.
 * @type {Record<string, (c: Ctx) => Promise<void>>}
 */
export const VECTORS = {
  // A legacy client that opens GET /sse, stops reading and POSTs large calls whose replies pile up.
  async 'non-reading-sse'(c) {
    const { host } = new URL(c.base);
    for (let i = 0; !c.stopped(); i++) {
      const got = await rawRequest(c, httpHead('GET', '/sse', host, { accept: 'text/event-stream' }), {
        readUntil: /data: (\/[^\r\n]*sessionId=[^\r\n]+)\r?\n/,
        holdMs: 15_000,
      });
      if (!got.match) continue;
      const endpoint = new URL(got.match[1], c.base);
      const legacyInit = JSON.parse(initializeBody(0));
      legacyInit.params.protocolVersion = '2024-11-05';
      for (const body of [JSON.stringify(legacyInit), INITIALIZED_BODY]) {
        await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
          (r) => r.arrayBuffer(),
          () => undefined,
        );
      }
      const big = JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'echo__echo', arguments: { text: 'x'.repeat(MB) } },
      });
      for (let k = 0; k < 32 && !c.stopped(); k++) {
        const res = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: big,
        }).catch(() => undefined);
        if (!res) break;
        judge(c.tally, res.status, await res.text());
        if (res.status !== 202) break; // the stream was cut off: its session is gone
      }
      await Promise.race([got.closed, sleep(5000)]);
    }
  },
  // Streamable HTTP: a long progress stream (2 KB token echoed in each notification) nobody reads.
  async 'non-reading-progress'(c) {
    const { host } = new URL(c.base);
    for (let i = 0; !c.stopped(); i++) {
      const sid = await session(c);
      if (!sid) continue;
      const body = call(
        i,
        'slow__sleep',
        { ms: 10_000, steps: 10_000 },
        { _meta: { progressToken: `t${i}-${'p'.repeat(2048)}` } },
      );
      const head = httpHead(
        'POST',
        new URL(c.url).pathname,
        host,
        { ...POST_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        body,
      );
      const got = await rawRequest(c, head, { body, readUntil: /\r\n\r\n/, holdMs: 25_000 });
      await got.closed;
      await deleteSession(c.url, sid).catch(() => undefined);
    }
  },
  // GET streams reset right after the request is sent (before the store's load returns).
  async 'aborted-gets'(c) {
    const { host } = new URL(c.base);
    while (!c.stopped()) {
      const sid = await session(c);
      if (!sid) continue;
      const head = httpHead('GET', new URL(c.url).pathname, host, {
        accept: 'text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-06-18',
      });
      await (
        await rawRequest(c, head, { reset: true, holdMs: 1000 })
      ).closed;
      await (
        await rawRequest(c, httpHead('GET', '/sse', host, { accept: 'text/event-stream' }), {
          reset: true,
          holdMs: 1000,
        })
      ).closed;
      // The session's one GET stream must be free again (not 409 STREAM_CONFLICT for good).
      await sleep(50);
      const ctl = new AbortController();
      const res = await fetch(c.url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        signal: ctl.signal,
      }).catch(() => undefined);
      if (res) {
        if (res.status === 200) judge(c.tally, 202, '');
        else judge(c.tally, res.status, await res.text());
        ctl.abort();
      }
      await deleteSession(c.url, sid).catch(() => undefined);
    }
  },
  // Task calls with a 1 MB argument and a one-day ttl; the session is deleted every 20 calls.
  async 'large-task-args'(c) {
    const text = 'x'.repeat(MB);
    while (!c.stopped()) {
      const sid = await session(c, '2025-11-25');
      if (!sid) continue;
      for (let i = 0; i < 20 && !c.stopped(); i++)
        await post(c, sid, call(i, 'echo__echo', { text }, { task: { ttl: 86_400_000 } }), '2025-11-25');
      await deleteSession(c.url, sid).catch(() => undefined);
    }
  },
  // Sessions that ask for an elicitation and never answer it; the 8 newest stay open.
  async 'unanswered-elicitations'(c) {
    /** @type {string[]} */
    const open = [];
    for (let i = 0; !c.stopped(); i++) {
      const sid = await session(c, '2025-06-18', { elicitation: {} });
      if (!sid) continue;
      open.push(sid);
      await post(c, sid, call(i, 'everything__trigger-elicitation-request', {}));
      if (open.length > 8) await deleteSession(c.url, /** @type {string} */ (open.shift())).catch(() => undefined);
    }
    await Promise.all(open.map((sid) => deleteSession(c.url, sid).catch(() => undefined)));
  },
  // initialize → tools/call of an unknown tool → DELETE.
  async 'session-churn'(c) {
    for (let i = 0; !c.stopped(); i++) {
      const sid = await session(c);
      if (!sid) continue;
      await post(c, sid, call(i, 'everything__nope', {}));
      await deleteSession(c.url, sid).catch(() => undefined);
    }
  },
  // Calls of 3.5 MB on the shared echo pool, beside everyone else's.
  async 'large-calls'(c) {
    const sid = await session(c);
    const text = 'x'.repeat(3.5 * MB);
    for (let i = 0; !c.stopped(); i++) await post(c, sid, call(i, 'echo__echo', { text }));
  },
};

/**
 * Starts every vector (or those named) against a gateway; `stop()` ends them and returns the tallies.
 * @param {{ base: string, url: string }} gw @param {string[]} [names]
 */
export function startHostile(gw, names = Object.keys(VECTORS)) {
  let stopped = false;
  /** @type {Record<string, Tally>} */
  const tallies = {};
  const loops = names.map((name) => {
    const tally = (tallies[name] = { sent: 0, typed: 0, untyped: 0, samples: [] });
    const vector = VECTORS[name];
    if (!vector) throw new Error(`no hostile vector "${name}" (there are: ${Object.keys(VECTORS).join(', ')})`);
    return vector({ base: gw.base, url: gw.url, stopped: () => stopped, tally }).catch((err) => {
      tally.untyped++;
      tally.samples.push(`the loop failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  });
  return {
    tallies,
    /** @returns {Promise<{ tallies: Record<string, Tally>, cutOff: Record<string, number> }>} */
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return { tallies, cutOff: await cutOffByKind(gw.base) };
    },
  };
}

/** mcpgw_streams_cut_off_total by kind, from the gateway's /metrics. @param {string} base */
async function cutOffByKind(base) {
  /** @type {Record<string, number>} */
  const out = {};
  const text = await fetch(`${base}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  for (const m of text.matchAll(/^mcpgw_streams_cut_off_total\{kind="([^"]+)"\} (\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}
