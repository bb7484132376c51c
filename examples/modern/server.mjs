#!/usr/bin/env node
// A 2026-07-28-only MCP server over Streamable HTTP, stateless: no initialize, no sessions.
// The gateway's fixture for upstreams of the modern era (and the conformance suite's
// input-required-result-* scenarios through the gateway). Written by hand on node:http: it
// answers what the spec's stateless revision has (server/discover, lists with caching hints,
// input_required results with a signed requestState, subscriptions/listen), nothing else.
//
//   node examples/modern/server.mjs [--port 0] [--host 127.0.0.1] [--discover-fails]
// prints "modern fixture listening on http://127.0.0.1:PORT/mcp" once it listens.
//
// --discover-fails answers server/discover with -32601 (a server whose discovery is broken),
// for the gateway's fall-back tests.
//
// --tasks runs tasks itself (the extension io.modelcontextprotocol/tasks, declared in
// server/discover): the tool native_task {seconds} becomes a task for a request that declares
// the extension (tasks/get, tasks/cancel, tasks/update; Mcp-Name must be the task id), for the
// gateway's pass-through tests.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const VERSION = '2026-07-28';
const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  logLevel: 'io.modelcontextprotocol/logLevel',
};
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const SERVER_INFO = { name: 'modern-fixture', version: '1.0.0' };
const LIST_TTL_MS = 30000;
const KEY = randomBytes(32);

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const port = Number(opt('--port', '0'));
const host = opt('--host', '127.0.0.1');
const discoverFails = args.includes('--discover-fails');
const runsTasks = args.includes('--tasks');
const TASKS_EXT = 'io.modelcontextprotocol/tasks';

// --- requestState: HMAC-signed, so a tampered one is refused ----------------------------------
function sign(payload) {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${createHmac('sha256', KEY).update(body).digest('base64url')}`;
}
function verify(state) {
  if (typeof state !== 'string') return undefined;
  const dot = state.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const body = state.slice(0, dot);
  const mac = Buffer.from(state.slice(dot + 1), 'base64url');
  const want = createHmac('sha256', KEY).update(body).digest();
  if (mac.length !== want.length || !timingSafeEqual(mac, want)) return undefined;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

// --- input requests ------------------------------------------------------------------------
const ask = {
  name: (message = 'What is your name?') => ({
    method: 'elicitation/create',
    params: {
      message,
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
  }),
  sample: (text, maxTokens) => ({
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens },
  }),
  roots: () => ({ method: 'roots/list', params: {} }),
};
const inputRequired = (inputRequests, requestState) => ({
  resultType: 'input_required',
  inputRequests,
  ...(requestState ? { requestState } : {}),
});
const text = (t) => ({ content: [{ type: 'text', text: t }] });

/** An answer of the right shape, or undefined: a wrong or missing one is asked again. */
function answer(responses, key, check) {
  if (responses === null || typeof responses !== 'object') return undefined;
  const r = responses[key];
  return r !== null && typeof r === 'object' && check(r) ? r : undefined;
}
const isElicit = (r) => r.action === 'accept' && r.content !== null && typeof r.content === 'object';
const isSample = (r) => r.content !== null && typeof r.content === 'object';
const isRoots = (r) => Array.isArray(r.roots);
const sampledText = (r) => (typeof r.content.text === 'string' ? r.content.text : JSON.stringify(r.content));

/** The state a retry carries: required and valid once a tool issued one; -32602 when tampered. */
function stateOf(params, tool) {
  if (params.requestState === undefined) return undefined;
  const s = verify(params.requestState);
  if (!s || s.tool !== tool) throw new RpcError(-32602, 'Invalid requestState: integrity check failed');
  return s;
}

function checkResponses(params) {
  if (
    Object.hasOwn(params, 'inputResponses') &&
    (params.inputResponses === null ||
      typeof params.inputResponses !== 'object' ||
      Array.isArray(params.inputResponses))
  ) {
    throw new RpcError(-32602, 'inputResponses must be an object');
  }
  return params.inputResponses ?? {};
}

// --- tools -------------------------------------------------------------------------------
let extraTool = false;
const noArgs = { type: 'object', properties: {} };
const TOOLS = {
  echo: {
    description: 'Echoes its text (a plain tool that needs no input)',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    call: (a) => text(`echo: ${a.text}`),
  },
  test_input_required_result_elicitation: {
    description: 'Asks the user for a name (elicitation), then greets them',
    call: (_a, p, r) => {
      const got = answer(r, 'user_name', isElicit);
      return got ? text(`Hello, ${got.content.name}!`) : inputRequired({ user_name: ask.name() });
    },
  },
  test_input_required_result_sampling: {
    description: 'Asks the client to sample an answer',
    call: (_a, p, r) => {
      const got = answer(r, 'capital_question', isSample);
      return got
        ? text(`The model said: ${sampledText(got)}`)
        : inputRequired({ capital_question: ask.sample('What is the capital of France?', 100) });
    },
  },
  test_input_required_result_list_roots: {
    description: "Asks for the client's roots",
    call: (_a, p, r) => {
      const got = answer(r, 'client_roots', isRoots);
      return got
        ? text(`Roots: ${got.roots.map((x) => x.uri).join(', ')}`)
        : inputRequired({ client_roots: ask.roots() });
    },
  },
  test_input_required_result_request_state: {
    description: 'Round-trips a signed requestState',
    call: (_a, p, r) => {
      const s = stateOf(p, 'test_input_required_result_request_state');
      const got = answer(r, 'confirm', isElicit);
      if (s && got) return text(`state-ok: confirmed ${JSON.stringify(got.content.ok)} (round ${s.round})`);
      const confirm = {
        method: 'elicitation/create',
        params: {
          message: 'Please confirm',
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        },
      };
      return inputRequired({ confirm }, sign({ tool: 'test_input_required_result_request_state', round: 1 }));
    },
  },
  test_input_required_result_multiple_inputs: {
    description: 'Asks for a name, a sampled greeting and the roots at once',
    call: (_a, p, r) => {
      const s = stateOf(p, 'test_input_required_result_multiple_inputs');
      const name = answer(r, 'user_name', isElicit);
      const greeting = answer(r, 'greeting', isSample);
      const roots = answer(r, 'client_roots', isRoots);
      if (s && name && greeting && roots)
        return text(
          `${sampledText(greeting)} ${name.content.name}; roots: ${roots.roots.map((x) => x.uri).join(', ')}`,
        );
      const missing = {};
      if (!name) missing.user_name = ask.name();
      if (!greeting) missing.greeting = ask.sample('Generate a greeting', 50);
      if (!roots) missing.client_roots = ask.roots();
      if (Object.keys(missing).length === 0)
        Object.assign(missing, {
          user_name: ask.name(),
          greeting: ask.sample('Generate a greeting', 50),
          client_roots: ask.roots(),
        });
      return inputRequired(missing, sign({ tool: 'test_input_required_result_multiple_inputs', round: 1 }));
    },
  },
  test_input_required_result_multi_round: {
    description: 'Two rounds of elicitation, the state evolving between them',
    call: (_a, p, r) => {
      const tool = 'test_input_required_result_multi_round';
      const s = stateOf(p, tool);
      if (s?.round === 2) {
        const color = answer(r, 'step2', isElicit);
        if (color) return text(`${s.name} likes ${color.content.color}`);
      }
      if (s?.round === 1 || s?.round === 2) {
        const name = s.round === 1 ? answer(r, 'step1', isElicit) : { content: { name: s.name } };
        if (name) {
          const step2 = {
            method: 'elicitation/create',
            params: {
              message: 'Step 2: What is your favorite color?',
              requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
            },
          };
          return inputRequired({ step2 }, sign({ tool, round: 2, name: name.content.name }));
        }
      }
      return inputRequired({ step1: ask.name('Step 1: What is your name?') }, sign({ tool, round: 1 }));
    },
  },
  test_input_required_result_tampered_state: {
    description: 'Issues an HMAC-signed requestState and refuses a tampered one',
    call: (_a, p, r) => {
      const s = stateOf(p, 'test_input_required_result_tampered_state');
      if (s && answer(r, 'confirm', isElicit)) return text('state verified');
      return inputRequired(
        { confirm: ask.name('Confirm?') },
        sign({ tool: 'test_input_required_result_tampered_state', round: 1 }),
      );
    },
  },
  test_input_required_result_capabilities: {
    description: 'Asks only for what the client declared it can answer',
    call: (_a, p, r, caps) => {
      const wanted = {};
      if (caps.elicitation !== undefined && !answer(r, 'user_name', isElicit)) wanted.user_name = ask.name();
      if (caps.sampling !== undefined && !answer(r, 'summary', isSample))
        wanted.summary = ask.sample('Summarize the request', 50);
      if (caps.roots !== undefined && !answer(r, 'client_roots', isRoots)) wanted.client_roots = ask.roots();
      return Object.keys(wanted).length > 0
        ? inputRequired(wanted)
        : text(`done with capabilities: ${Object.keys(caps).join(', ') || 'none'}`);
    },
  },
  // Never satisfied: asks again whatever it gets (the gateway must bound the rounds).
  loop_input_required: {
    description: 'Asks for input on every round, forever',
    call: (_a, p) => {
      const s = stateOf(p, 'loop_input_required');
      return inputRequired(
        { again: ask.name('Again?') },
        sign({ tool: 'loop_input_required', round: (s?.round ?? 0) + 1 }),
      );
    },
  },
  // Says which answers reached it: what a gateway between it and the client let through.
  inspect_inputs: {
    description: 'Asks for "a", then lists the keys of the inputResponses it was given',
    call: (_a, p, r) => {
      const s = stateOf(p, 'inspect_inputs');
      if (s) return text(`keys: ${Object.keys(r).sort().join(',')}`);
      return inputRequired({ a: ask.name('A?') }, sign({ tool: 'inspect_inputs', round: 1 }));
    },
  },
  // For the gateway's guardrails on asks: its question quotes AWS's documented example key id, and
  // it says whether the answer it got held the test card number (Visa's 4111...), as it saw it.
  ask_secret: {
    description: 'Asks a question quoting a (made-up) access key, then says whether the answer held a card number',
    inputSchema: { type: 'object', properties: { method: { type: 'string' } } },
    call: (a, p, r) => {
      const sampling = a.method === 'sampling/createMessage';
      const got = answer(r, 'q', sampling ? isSample : isElicit);
      if (got)
        return text(`answer held the card: ${JSON.stringify(got).includes('4111 1111 1111 1111') ? 'yes' : 'no'}`);
      const question = 'Deploy with AKIAIOSFODNN7EXAMPLE?';
      return inputRequired({ q: sampling ? ask.sample(question, 50) : ask.name(question) });
    },
  },
  // Adds (or removes) the tool "extra": its list changes, and listen streams hear it.
  toggle_extra_tool: {
    description: 'Adds or removes the tool "extra" (tools/list_changed on listen streams)',
    call: () => {
      extraTool = !extraTool;
      broadcast('notifications/tools/list_changed');
      return text(extraTool ? 'extra added' : 'extra removed');
    },
  },
  touch_note: {
    description: 'Changes the resource modern://note (resources/updated on listen streams that watch it)',
    call: () => {
      note = `note ${Date.now()}`;
      broadcast('notifications/resources/updated', { uri: 'modern://note' });
      return text('touched');
    },
  },
  // Logs on its reply stream (an SSE reply), before its result: for the gateway's log relay tests.
  log_three: {
    description:
      "Sends three log messages (debug, info, warning) before its result: those at or above the request's logLevel",
    inputSchema: { type: 'object', properties: { unfiltered: { type: 'boolean' } } },
    logs: ['debug', 'info', 'warning'],
    call: () => text('logged'),
  },
};
const EXTRA = { description: 'Exists while toggled on', call: () => text('extra!') };

// --- tasks of its own (--tasks) -------------------------------------------------------------
const tasks = new Map();
const taskView = (t) => ({
  taskId: t.taskId,
  status: t.status,
  createdAt: t.createdAt,
  lastUpdatedAt: t.lastUpdatedAt,
  ttlMs: 60000,
  pollIntervalMs: 100,
});
const NATIVE_TASK = {
  description: 'A task of this server (with the tasks extension), else an ordinary call',
  inputSchema: { type: 'object', properties: { seconds: { type: 'number' } } },
  call: (args, _params, _responses, caps) => {
    const seconds = Number(args.seconds ?? 0);
    if (!caps.extensions?.[TASKS_EXT]) return text(`ran ${seconds} s without a task`);
    const now = new Date().toISOString();
    const t = {
      taskId: `native-${randomBytes(6).toString('hex')}`,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
    };
    t.timer = setTimeout(
      () =>
        Object.assign(t, {
          status: 'completed',
          lastUpdatedAt: new Date().toISOString(),
          result: text(`native task done after ${seconds} s`),
        }),
      seconds * 1000,
    );
    tasks.set(t.taskId, t);
    return { ...taskView(t), resultType: 'task' };
  },
};

function taskMethod(method, params, nameHeader) {
  const t = tasks.get(params.taskId);
  if (!t) throw new RpcError(-32602, 'Task not found');
  if (nameHeader !== params.taskId)
    throw new RpcError(-32020, `Header mismatch: Mcp-Name ${JSON.stringify(nameHeader)} is not the task id`);
  if (method === 'tasks/get') return { ...taskView(t), ...(t.result ? { result: t.result } : {}) };
  if (method === 'tasks/cancel' && t.status === 'working') {
    clearTimeout(t.timer);
    Object.assign(t, { status: 'cancelled', lastUpdatedAt: new Date().toISOString() });
  }
  return {};
}

function toolList() {
  const all = runsTasks ? { ...TOOLS, native_task: NATIVE_TASK } : TOOLS;
  const tools = Object.entries(all).map(([name, t]) => ({
    name,
    description: t.description,
    inputSchema: t.inputSchema ?? noArgs,
  }));
  if (extraTool) tools.push({ name: 'extra', description: EXTRA.description, inputSchema: noArgs });
  return tools;
}

let note = 'a note';
const PROMPT = 'test_input_required_result_prompt';

// --- methods ------------------------------------------------------------------------------
const cached = (result, scope = 'public') => ({ ...result, ttlMs: LIST_TTL_MS, cacheScope: scope });

function handle(method, params, nameHeader) {
  const caps = params._meta?.[META.clientCapabilities] ?? {};
  if (runsTasks && (method === 'tasks/get' || method === 'tasks/cancel' || method === 'tasks/update'))
    return taskMethod(method, params, nameHeader);
  switch (method) {
    case 'server/discover':
      if (discoverFails) throw new RpcError(-32601, 'Method not found: server/discover');
      return cached({
        supportedVersions: [VERSION],
        capabilities: {
          logging: {},
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          ...(runsTasks ? { extensions: { [TASKS_EXT]: {} } } : {}),
        },
        serverInfo: SERVER_INFO,
      });
    case 'tools/list':
      return cached({ tools: toolList() });
    case 'prompts/list':
      return cached({ prompts: [{ name: PROMPT, description: 'A prompt that asks for context first' }] });
    case 'resources/list':
      return cached({ resources: [{ uri: 'modern://note', name: 'note', mimeType: 'text/plain' }] });
    case 'resources/templates/list':
      return cached({ resourceTemplates: [] });
    case 'resources/read':
      if (params.uri !== 'modern://note')
        throw new RpcError(-32602, `Resource not found: ${params.uri}`, { uri: params.uri });
      return cached({ contents: [{ uri: 'modern://note', mimeType: 'text/plain', text: note }] }, 'private');
    case 'tools/call': {
      const tool =
        params.name === 'extra' && extraTool
          ? EXTRA
          : runsTasks && params.name === 'native_task'
            ? NATIVE_TASK
            : Object.hasOwn(TOOLS, params.name)
              ? TOOLS[params.name]
              : undefined;
      if (!tool) throw new RpcError(-32602, `Unknown tool: ${params.name}`);
      const responses = checkResponses(params);
      return tool.call(params.arguments ?? {}, params, responses, caps);
    }
    case 'prompts/get': {
      if (params.name !== PROMPT) throw new RpcError(-32602, `Unknown prompt: ${params.name}`);
      const got = answer(checkResponses(params), 'user_context', isElicit);
      if (!got) {
        return inputRequired({
          user_context: {
            method: 'elicitation/create',
            params: {
              message: 'What context should the prompt use?',
              requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
            },
          },
        });
      }
      return {
        messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${got.content.context}` } }],
      };
    }
  }
  throw new RpcError(-32601, `Method not found: ${method}`);
}

/**
 * The log messages a tools/call sends before its result: none without a logLevel in its _meta
 * (2026-07-28: the server MUST NOT), else those at or above it; `unfiltered: true` sends all
 * of them whatever the level, as a careless server would (the gateway must filter).
 */
function logsOf(method, params) {
  const tool = method === 'tools/call' && Object.hasOwn(TOOLS, params.name) ? TOOLS[params.name] : undefined;
  const level = params._meta?.[META.logLevel];
  if (!tool?.logs || typeof level !== 'string') return [];
  const unfiltered = params.arguments?.unfiltered === true;
  return tool.logs
    .filter((l) => unfiltered || LOG_LEVELS.indexOf(l) >= LOG_LEVELS.indexOf(level))
    .map((l) => ({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: l, logger: 'modern-fixture', data: `${l} message` },
    }));
}

// --- subscriptions/listen ------------------------------------------------------------------
const listeners = new Set();
const LISTEN_FIELDS = {
  toolsListChanged: 'notifications/tools/list_changed',
  promptsListChanged: 'notifications/prompts/list_changed',
  resourcesListChanged: 'notifications/resources/list_changed',
};

function broadcast(method, params = {}) {
  for (const l of listeners) {
    const wanted = method === 'notifications/resources/updated' ? l.uris.has(params.uri) : l.methods.has(method);
    if (wanted) l.write({ jsonrpc: '2.0', method, params: { ...params, _meta: { [META.subscriptionId]: l.id } } });
  }
}

function listen(message, res) {
  const requested = message.params?.notifications ?? {};
  const honoured = {};
  const methods = new Set();
  for (const [field, m] of Object.entries(LISTEN_FIELDS)) {
    if (requested[field] === true) {
      honoured[field] = true;
      methods.add(m);
    }
  }
  const uris = new Set(
    Array.isArray(requested.resourceSubscriptions)
      ? requested.resourceSubscriptions.filter((u) => u === 'modern://note')
      : [],
  );
  if (uris.size > 0) honoured.resourceSubscriptions = [...uris];
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  const write = (m) => res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
  const l = { id: message.id, methods, uris, write };
  write({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { [META.subscriptionId]: message.id }, notifications: honoured },
  });
  listeners.add(l);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15000);
  res.on('close', () => {
    clearInterval(keepAlive);
    listeners.delete(l);
  });
}

// --- HTTP --------------------------------------------------------------------------------
const MAX_BODY = 1 << 20;

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path !== '/mcp') return reply(res, 404, { error: 'not found' });
  // Stateless: no GET stream, no DELETE.
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' });
    return res.end();
  }
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(c);
  });
  req.on('end', () => {
    let message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    if (message === null || typeof message !== 'object' || Array.isArray(message)) {
      return reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } });
    }
    if (!('id' in message)) {
      res.writeHead(202);
      return res.end();
    }
    const params = message.params ?? {};
    const version = params._meta?.[META.protocolVersion];
    if (message.method === 'initialize' || version !== VERSION) {
      // A 2025 client (or none at all): this server speaks only 2026-07-28.
      return reply(res, 400, {
        jsonrpc: '2.0',
        id: message.id,
        error: {
          code: -32022,
          message: `Unsupported protocol version: ${JSON.stringify(message.method === 'initialize' ? params.protocolVersion : version)}`,
          data: { supported: [VERSION] },
        },
      });
    }
    const header = req.headers['mcp-method'];
    if (header !== message.method) {
      return reply(res, 400, {
        jsonrpc: '2.0',
        id: message.id,
        error: {
          code: -32020,
          message: `Header mismatch: Mcp-Method ${JSON.stringify(header)} is not ${message.method}`,
        },
      });
    }
    if (message.method === 'subscriptions/listen') return listen(message, res);
    try {
      const result = handle(message.method, params, req.headers['mcp-name']);
      const answer = {
        jsonrpc: '2.0',
        id: message.id,
        result: { resultType: 'complete', ...result, _meta: { [META.serverInfo]: SERVER_INFO } },
      };
      const logs = logsOf(message.method, params);
      if (logs.length === 0) return reply(res, 200, answer);
      // An SSE reply: the request's log messages first, then its answer.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const m of [...logs, answer]) res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
      res.end();
    } catch (err) {
      const error =
        err instanceof RpcError
          ? { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) }
          : { code: -32603, message: String(err) };
      reply(res, 200, { jsonrpc: '2.0', id: message.id, error });
    }
  });
});

server.listen(port, host, () => {
  const a = server.address();
  console.log(`modern fixture listening on http://${a.address}:${a.port}/mcp`);
});
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
