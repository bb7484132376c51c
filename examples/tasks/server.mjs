// @ts-check
// A stdio MCP server that knows nothing of tasks, with the tools the official conformance
// suite's tasks-* scenarios name (@modelcontextprotocol/conformance 0.2.0-alpha.x, extension
// io.modelcontextprotocol/tasks). The gateway gives them task semantics:
// examples/tasks/gateway.yaml marks which ones (`upstreams[].tasks`), and
// `CONFORMANCE_TASKS=1 npm run test:conformance` runs the scenarios through it.
//
// Written from the scenarios' printed requirements (digest: the suite's descriptions), not
// copied from the suite. Plain SDK v1 `Server` (not McpServer): McpServer turns every thrown
// error into an isError result, and protocol_error_job needs a real JSON-RPC error. No tasks
// capability, no `execution.taskSupport`: every call here is an ordinary, synchronous call.
//
// stdout is the JSON-RPC channel: never print anything else to it. Diagnostics go to stderr.
//
// Tools:
//   greet {name}                 "Hello, {name}!" at once (sync only)
//   slow_compute {seconds, label} sleeps `seconds` (0: at once), then answers; honours
//                                notifications/cancelled (the call stops, nothing is answered)
//   failing_job {}               a tool error (isError: true) after ~1 s
//   protocol_error_job {}        a JSON-RPC error (-32603) after ~0.5 s
//   confirm_delete {filename}    asks the client (elicitation/create: {confirm: boolean}),
//                                then answers "deleted" or "kept"
//   multi_input {}               asks two questions at once (two elicitation/create in flight),
//                                answers after both
//   test_tool_with_task {}       asks for the user's name (elicitation/create: {name}), then
//                                works ~1 s and answers "Hello, {name}!"
//   pid {}                       this process's pid (tests: which worker ran a call)

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { sleep } from '../lib/abortable-sleep.mjs';

/** @param {string} msg */
function log(msg) {
  process.stderr.write(`[tasks-fixture ${process.pid}] ${msg}\n`);
}

/** @param {string} text */
const text = (text) => ({ content: [{ type: 'text', text }] });

const TOOLS = [
  {
    name: 'greet',
    description: 'Greets at once: "Hello, {name}!". Synchronous only.',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
  {
    name: 'slow_compute',
    description: 'Works for `seconds` seconds (0: answers at once), then answers. Stops when cancelled.',
    inputSchema: {
      type: 'object',
      properties: {
        seconds: { type: 'number', minimum: 0, maximum: 3600 },
        label: { type: 'string' },
      },
      required: ['seconds'],
    },
  },
  {
    name: 'failing_job',
    description: 'Reports a tool error (isError) after about a second.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'protocol_error_job',
    description: 'Fails with a JSON-RPC error (internal error) after half a second.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'confirm_delete',
    description: 'Asks the client to confirm (elicitation), then reports whether the file was deleted.',
    inputSchema: { type: 'object', properties: { filename: { type: 'string' } } },
  },
  {
    name: 'multi_input',
    description: 'Asks two questions at once (two elicitations in flight), answers after both.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'test_tool_with_task',
    description: "Asks for the user's name (elicitation), works about a second, then greets them.",
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'pid',
    description: "This server process's pid.",
    inputSchema: { type: 'object', properties: {} },
  },
];

const server = new Server({ name: 'tasks-fixture', version: '0.1.0' }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));

/**
 * One elicitation/create to the client, tied to the tool call (so it travels on the call's
 * stream) and ended when the call is cancelled.
 * @param {string} message
 * @param {Record<string, import('@modelcontextprotocol/sdk/types.js').PrimitiveSchemaDefinition>} properties
 * @param {string[]} required
 * @param {{ requestId: string | number, signal: AbortSignal }} extra
 */
function ask(message, properties, required, extra) {
  return server.elicitInput(
    { mode: 'form', message, requestedSchema: { type: 'object', properties, required } },
    { relatedRequestId: extra.requestId, signal: extra.signal, timeout: 3_600_000 },
  );
}

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = /** @type {Record<string, unknown>} */ (request.params.arguments ?? {});
  switch (request.params.name) {
    case 'greet':
      return text(`Hello, ${String(args.name ?? 'World')}!`);
    case 'slow_compute': {
      const seconds = Number(args.seconds ?? 1);
      if (!Number.isFinite(seconds) || seconds < 0)
        throw new McpError(ErrorCode.InvalidParams, 'seconds must be a number >= 0');
      const label = typeof args.label === 'string' ? args.label : 'slow_compute';
      const started = Date.now();
      try {
        if (seconds > 0) await sleep(seconds * 1000, extra.signal);
      } catch (err) {
        log(`slow_compute ${label}: cancelled after ${Date.now() - started} ms`);
        throw err;
      }
      return { ...text(`${label}: computed for ${seconds} s`), structuredContent: { label, seconds } };
    }
    case 'failing_job':
      await sleep(1000, extra.signal);
      return { ...text('failing_job: the job failed (a tool error)'), isError: true };
    case 'protocol_error_job':
      await sleep(500, extra.signal);
      throw new McpError(ErrorCode.InternalError, 'protocol_error_job: internal failure');
    case 'confirm_delete': {
      const filename = String(args.filename ?? 'file.txt');
      const answer = await ask(
        `Delete ${filename}?`,
        { confirm: { type: 'boolean', description: 'Delete it' } },
        ['confirm'],
        extra,
      );
      const yes = answer.action === 'accept' && answer.content?.confirm === true;
      return text(yes ? `deleted ${filename}` : `kept ${filename} (${answer.action})`);
    }
    case 'multi_input': {
      /** @type {Record<string, import('@modelcontextprotocol/sdk/types.js').PrimitiveSchemaDefinition>} */
      const properties = { name: { type: 'string' }, confirm: { type: 'boolean' } };
      const [first, second] = await Promise.all([
        ask('First question: your name, and confirm', properties, [], extra),
        ask('Second question: your name, and confirm', properties, [], extra),
      ]);
      return text(
        `first: ${first.action} ${JSON.stringify(first.content ?? {})}; second: ${second.action} ${JSON.stringify(second.content ?? {})}`,
      );
    }
    case 'test_tool_with_task': {
      const answer = await ask(
        'What is your name?',
        { name: { type: 'string', description: 'Your name' } },
        ['name'],
        extra,
      );
      if (answer.action !== 'accept') return { ...text(`no name given (${answer.action})`), isError: true };
      await sleep(1000, extra.signal);
      return text(`Hello, ${String(answer.content?.name)}!`);
    }
    case 'pid':
      return text(String(process.pid));
    default:
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
  }
});

const transport = new StdioServerTransport();
await server.connect(transport);
log('ready');
