// @ts-check
// A stdio MCP server offering the fixtures the official conformance suite
// (@modelcontextprotocol/conformance, server scenarios) calls, so the suite can
// run through the gateway: `npm run test:conformance` fronts this server with
// `prefix: ""` so the names below reach the suite unchanged.
//
// Written from the scenario descriptions (`conformance list --server` and each
// scenario's "Server Implementation Requirements"), not copied from the suite.
//
// stdout is the JSON-RPC channel: never print anything else to it.
// Diagnostics go to stderr.
//
// Tools:
//   test_simple_text, test_image_content, test_audio_content,
//   test_embedded_resource, test_multiple_content_types, test_tool_with_logging,
//   test_error_handling, test_tool_with_progress, test_sampling {prompt},
//   test_elicitation {message}, test_elicitation_sep1034_defaults,
//   test_elicitation_sep1330_enums, json_schema_2020_12_tool, test_reconnection;
//   for the 2026-07-28 scenarios: test_trigger_tool_change (toggles test_toggled_tool),
//   test_trigger_prompt_change (toggles test_toggled_prompt), test_logging_tool,
//   test_streaming_elicitation, test_missing_capability (asks for sampling regardless),
//   test_header_tool {region} (x-mcp-header: Region), test_touch_resource {uri} (resources/updated),
//   test_elicitation_pair (a second question while the first is unanswered)
// Resources: test://static-text, test://static-binary, test://watched-resource,
//   test://template/{id}/data (template)
// Prompts: test_simple_prompt, test_prompt_with_arguments {arg1, arg2} (arg1 completes),
//   test_prompt_with_embedded_resource {resourceUri}, test_prompt_with_image
// Also: logging (capability + notifications/message), completion/complete,
//   resources/subscribe + resources/unsubscribe.
//
// HTTP-only behaviour: `server-sse-polling` expects test_reconnection to close the
// POST's SSE stream mid-call (the SDK's `closeSSEStream`, SEP-1699) so the client
// resumes by GET with Last-Event-ID. A stdio server has no HTTP stream to close;
// here test_reconnection only waits and answers. Whether the stream is closed and
// resumed is up to the gateway. Sampling and elicitation need a client that
// declared those capabilities to reach this process (gateway `mode: per-session`).

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { deflateSync } from 'node:zlib';
import { z } from 'zod';

/** @param {string} msg */
function log(msg) {
  process.stderr.write(`[conformance ${process.pid}] ${msg}\n`);
}

/** @param {number} ms */
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// --- binary payloads, made here rather than pasted -------------------------------

/** CRC-32 (PNG chunks). @param {Buffer} buf */
function crc32(buf) {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** @param {string} type @param {Buffer} data */
function pngChunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A 1x1 red RGB PNG, base64. */
function redPixelPng() {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0); // width
  ihdr.writeUInt32BE(1, 4); // height
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // colour type: truecolour
  const raw = Buffer.from([0, 0xff, 0x00, 0x00]); // filter byte, then R G B
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]).toString('base64');
}

/** 10 ms of silence: 8 kHz, mono, 8-bit PCM WAV, base64. */
function silentWav() {
  const samples = Buffer.alloc(80, 0x80);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // channels
  header.writeUInt32LE(8000, 24); // sample rate
  header.writeUInt32LE(8000, 28); // byte rate
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]).toString('base64');
}

const PNG = redPixelPng();
const WAV = silentWav();

// --- server ----------------------------------------------------------------------

const server = new McpServer(
  { name: 'conformance-fixture', version: '0.1.0' },
  { capabilities: { logging: {}, resources: { subscribe: true } } },
);

// Tools -----------------------------------------------------------------------------

server.registerTool('test_simple_text', { description: 'Returns a simple text response.' }, async () => ({
  content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
}));

server.registerTool('test_image_content', { description: 'Returns a 1x1 PNG image.' }, async () => ({
  content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
}));

server.registerTool('test_audio_content', { description: 'Returns a short WAV clip.' }, async () => ({
  content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
}));

server.registerTool('test_embedded_resource', { description: 'Returns an embedded text resource.' }, async () => ({
  content: [
    {
      type: 'resource',
      resource: {
        uri: 'test://embedded-resource',
        mimeType: 'text/plain',
        text: 'This is an embedded resource content.',
      },
    },
  ],
}));

server.registerTool(
  'test_multiple_content_types',
  { description: 'Returns text, image and resource content in one result.' },
  async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  }),
);

server.registerTool(
  'test_tool_with_logging',
  { description: 'Sends three info log notifications while it runs.' },
  async (extra) => {
    /** @param {string} data */
    const info = (data) =>
      extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', logger: 'conformance', data },
      });
    await info('Tool execution started');
    await delay(50);
    await info('Tool processing data');
    await delay(50);
    await info('Tool execution completed');
    return { content: [{ type: 'text', text: 'Tool with logging executed successfully' }] };
  },
);

server.registerTool(
  'test_error_handling',
  { description: 'Always fails; the failure is reported as a result with isError: true.' },
  async () => {
    // The SDK turns an error thrown by a tool into { isError: true, content: [text] }.
    throw new Error('This tool intentionally returns an error for testing');
  },
);

server.registerTool(
  'test_tool_with_progress',
  { description: 'Reports progress 0, 50 and 100 of 100 (when the request carries a progressToken).' },
  async (extra) => {
    const progressToken = extra._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (progress > 0) await delay(50);
      if (progressToken !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100 },
        });
      }
    }
    return { content: [{ type: 'text', text: 'Tool with progress executed successfully' }] };
  },
);

server.registerTool(
  'test_sampling',
  {
    description: 'Asks the client for an LLM completion (sampling/createMessage) of the prompt.',
    inputSchema: { prompt: z.string().describe('The prompt to send to the LLM') },
  },
  async ({ prompt }, extra) => {
    // Throws (so the tool returns isError) when the client did not declare sampling.
    const result = await server.server.createMessage(
      { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
      { relatedRequestId: extra.requestId },
    );
    const content = Array.isArray(result.content) ? result.content : [result.content];
    const text = content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('');
    return { content: [{ type: 'text', text: `LLM response: ${text}` }] };
  },
);

server.registerTool(
  'test_elicitation',
  {
    description: 'Asks the user (elicitation/create) for a username and an email address.',
    inputSchema: { message: z.string().describe('The message to show the user') },
  },
  async ({ message }, extra) => {
    const result = await server.server.elicitInput(
      {
        message,
        requestedSchema: {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
      },
      { relatedRequestId: extra.requestId },
    );
    return {
      content: [
        {
          type: 'text',
          text: `User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
        },
      ],
    };
  },
);

server.registerTool(
  'test_elicitation_sep1034_defaults',
  { description: 'Elicitation whose schema has a default for every primitive type (SEP-1034).' },
  async (extra) => {
    const result = await server.server.elicitInput(
      {
        message: 'Please review these details (every field has a default).',
        requestedSchema: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'Name', default: 'John Doe' },
            age: { type: 'integer', description: 'Age', default: 30 },
            score: { type: 'number', description: 'Score', default: 95.5 },
            status: {
              type: 'string',
              description: 'Status',
              enum: ['active', 'inactive', 'pending'],
              default: 'active',
            },
            verified: { type: 'boolean', description: 'Verified', default: true },
          },
        },
      },
      { relatedRequestId: extra.requestId },
    );
    return {
      content: [
        {
          type: 'text',
          text: `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
        },
      ],
    };
  },
);

server.registerTool(
  'test_elicitation_sep1330_enums',
  { description: 'Elicitation whose schema uses each enum form (SEP-1330).' },
  async (extra) => {
    const result = await server.server.elicitInput(
      {
        message: 'Pick some options.',
        requestedSchema: {
          type: 'object',
          properties: {
            untitledSingle: { type: 'string', title: 'Untitled single', enum: ['option1', 'option2', 'option3'] },
            titledSingle: {
              type: 'string',
              title: 'Titled single',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: {
              type: 'string',
              title: 'Legacy titled',
              enum: ['opt1', 'opt2', 'opt3'],
              enumNames: ['Option One', 'Option Two', 'Option Three'],
            },
            untitledMulti: {
              type: 'array',
              title: 'Untitled multi',
              items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            },
            titledMulti: {
              type: 'array',
              title: 'Titled multi',
              items: {
                anyOf: [
                  { const: 'value1', title: 'First Choice' },
                  { const: 'value2', title: 'Second Choice' },
                  { const: 'value3', title: 'Third Choice' },
                ],
              },
            },
          },
        },
      },
      { relatedRequestId: extra.requestId },
    );
    return {
      content: [
        {
          type: 'text',
          text: `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
        },
      ],
    };
  },
);

// SEP-1613/SEP-2106: the listed inputSchema must keep $schema (2020-12), $defs (with $anchor),
// allOf, if/then/else and additionalProperties: false. zod's JSON Schema output carries .meta() keys at the
// root, and .strict() gives additionalProperties: false.
const address = z.object({ street: z.string().optional(), city: z.string().optional() });
server.registerTool(
  'json_schema_2020_12_tool',
  {
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: z
      .object({
        name: z.string().optional(),
        address: address.optional().meta({ $ref: '#/$defs/address' }),
      })
      .strict()
      .meta({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $defs: {
          address: {
            $anchor: 'address',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
          },
        },
        // Composition and conditionals must reach clients as written (SEP-2106).
        allOf: [{ anyOf: [{ required: ['name'] }, { required: ['address'] }, { type: 'object' }] }],
        if: { properties: { name: { const: 'home' } }, required: ['name'] },
        then: { required: ['address'] },
        else: {},
      }),
  },
  async (args) => ({ content: [{ type: 'text', text: `Received: ${JSON.stringify(args)}` }] }),
);

server.registerTool(
  'test_reconnection',
  {
    description:
      'SSE polling fixture (SEP-1699). Over HTTP it would close the SSE stream mid-call; over stdio it waits briefly and answers.',
  },
  async () => {
    await delay(100);
    return { content: [{ type: 'text', text: 'Reconnection test completed successfully' }] };
  },
);

// Resources ---------------------------------------------------------------------------

server.registerResource(
  'static-text',
  'test://static-text',
  { description: 'A static text resource.', mimeType: 'text/plain' },
  async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  }),
);

server.registerResource(
  'static-binary',
  'test://static-binary',
  { description: 'A static binary resource (1x1 PNG).', mimeType: 'image/png' },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }] }),
);

server.registerResource(
  'watched-resource',
  'test://watched-resource',
  { description: 'A resource clients may subscribe to.', mimeType: 'text/plain' },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content.' }] }),
);

server.registerResource(
  'template-data',
  new ResourceTemplate('test://template/{id}/data', { list: undefined }),
  { description: 'Data for an id.', mimeType: 'application/json' },
  async (uri, variables) => {
    const raw = variables.id;
    const id = Array.isArray(raw) ? raw.join(',') : String(raw);
    return {
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
        },
      ],
    };
  },
);

server.registerTool(
  'test_elicitation_pair',
  { description: 'Asks the client two questions, the second 100 ms after the first while neither is answered.' },
  async (extra) => {
    const ask = (/** @type {string} */ message) =>
      server.server.elicitInput(
        { message, requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } } },
        { relatedRequestId: extra.requestId },
      );
    const first = ask('First?');
    await delay(100);
    const [a, b] = await Promise.all([first, ask('Second?')]);
    return {
      content: [
        { type: 'text', text: `first=${JSON.stringify(a.content ?? {})} second=${JSON.stringify(b.content ?? {})}` },
      ],
    };
  },
);

server.registerTool(
  'test_touch_resource',
  {
    description:
      'Tells subscribers that a resource changed (notifications/resources/updated), if anyone subscribed to it.',
    inputSchema: { uri: z.string() },
  },
  async ({ uri }) => {
    const subscribed = subscriptions.has(uri);
    if (subscribed) await server.server.sendResourceUpdated({ uri });
    return { content: [{ type: 'text', text: subscribed ? `updated ${uri}` : `nobody subscribed to ${uri}` }] };
  },
);

// 2026-07-28 diagnostics ---------------------------------------------------------------
// The stateless scenarios change the lists while a subscriptions/listen stream is open, and
// look for tools that log, that elicit, and that mirror an argument into a header.

const toggledTool = server.registerTool(
  'test_toggled_tool',
  { description: 'Comes and goes with test_trigger_tool_change.' },
  async () => ({
    content: [{ type: 'text', text: 'toggled tool' }],
  }),
);
server.registerTool(
  'test_trigger_tool_change',
  { description: 'Adds or removes test_toggled_tool (tools/list_changed).' },
  async () => {
    if (toggledTool.enabled) toggledTool.disable();
    else toggledTool.enable();
    return { content: [{ type: 'text', text: `test_toggled_tool ${toggledTool.enabled ? 'added' : 'removed'}` }] };
  },
);
/** @type {import('@modelcontextprotocol/sdk/server/mcp.js').RegisteredPrompt | undefined} */
let toggledPrompt;
server.registerTool(
  'test_trigger_prompt_change',
  { description: 'Adds or removes test_toggled_prompt (prompts/list_changed).' },
  async () => {
    if (toggledPrompt?.enabled) toggledPrompt.disable();
    else toggledPrompt?.enable();
    return { content: [{ type: 'text', text: `test_toggled_prompt ${toggledPrompt?.enabled ? 'added' : 'removed'}` }] };
  },
);
server.registerTool(
  'test_logging_tool',
  { description: 'Sends an info log notification, then answers.' },
  async (extra) => {
    await extra.sendNotification({
      method: 'notifications/message',
      params: { level: 'info', logger: 'conformance', data: 'logging tool ran' },
    });
    return { content: [{ type: 'text', text: 'logged' }] };
  },
);
server.registerTool(
  'test_streaming_elicitation',
  { description: 'Asks the client (elicitation/create) while it runs; answers either way.' },
  async (extra) => {
    try {
      const result = await server.server.elicitInput(
        { message: 'Continue?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } },
        { relatedRequestId: extra.requestId },
      );
      return { content: [{ type: 'text', text: `elicitation: ${result.action}` }] };
    } catch (err) {
      return {
        content: [{ type: 'text', text: `no elicitation (${err instanceof Error ? err.message : String(err)})` }],
      };
    }
  },
);
server.registerTool(
  'test_missing_capability',
  { description: 'Asks the client for sampling whatever it declared (the SDK does not check sampling without tools).' },
  async (extra) => {
    const result = await server.server.createMessage(
      { messages: [{ role: 'user', content: { type: 'text', text: 'ping' } }], maxTokens: 10 },
      { relatedRequestId: extra.requestId },
    );
    return { content: [{ type: 'text', text: `sampled: ${JSON.stringify(result.content)}` }] };
  },
);
server.registerTool(
  'test_header_tool',
  {
    description: 'Echoes region, which 2026-07-28 clients mirror into an Mcp-Param-Region header.',
    inputSchema: { region: z.string().meta({ 'x-mcp-header': 'Region' }) },
  },
  async ({ region }) => ({ content: [{ type: 'text', text: `region: ${region}` }] }),
);

/** URIs with at least one subscriber (this process serves one client in per-session mode). */
const subscriptions = new Set();
server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
  subscriptions.add(request.params.uri);
  return {};
});
server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
  subscriptions.delete(request.params.uri);
  return {};
});

// Prompts -----------------------------------------------------------------------------

toggledPrompt = server.registerPrompt(
  'test_toggled_prompt',
  { description: 'Comes and goes with test_trigger_prompt_change.' },
  () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'toggled prompt' } }],
  }),
);

server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments.' }, () => ({
  messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
}));

const ARG1_SUGGESTIONS = ['paris', 'park', 'party', 'test', 'testing', 'testValue1'];
server.registerPrompt(
  'test_prompt_with_arguments',
  {
    description: 'A prompt with two required arguments.',
    argsSchema: {
      arg1: completable(z.string().describe('First test argument'), (value) =>
        ARG1_SUGGESTIONS.filter((s) => s.startsWith(value ?? '')),
      ),
      arg2: z.string().describe('Second test argument'),
    },
  },
  ({ arg1, arg2 }) => ({
    messages: [
      { role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } },
    ],
  }),
);

server.registerPrompt(
  'test_prompt_with_embedded_resource',
  {
    description: 'A prompt embedding the resource it is given.',
    argsSchema: { resourceUri: z.string().describe('URI of the resource to embed') },
  },
  ({ resourceUri }) => ({
    messages: [
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
        },
      },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ],
  }),
);

server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image.' }, () => ({
  messages: [
    { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
    { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
  ],
}));

server.server.onerror = (/** @type {unknown} */ err) =>
  log(`error: ${err instanceof Error ? err.message : String(err)}`);

// Exit promptly when the client closes our stdin (e.g. the gateway shuts the worker down).
process.stdin.on('end', () => {
  log('stdin closed, exiting');
  process.exit(0);
});

await server.connect(new StdioServerTransport());
log('ready');
