/**
 * What the fuzz tests share: arbitraries for hostile JSON-RPC messages (fast-check) and the check
 * that a reply is a well-formed JSON-RPC message whose errors come from the one error table.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { ERRORS, type ErrorName } from '../../src/jsonrpc/errors.js';
import { MCP_HEADERS } from './gateway.js';
import { MODERN_META, MODERN_VERSION } from './stateless.js';
import { parseSse } from './sse.js';

/** Every status the table gives, and 200 (in-band errors and results). */
export const STATUSES = [200, ...new Set(Object.values(ERRORS).map((e) => e.httpStatus))];

export const METHODS = [
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'logging/setLevel',
  'completion/complete',
  'subscriptions/listen',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'tasks/get',
  'invented/method',
  'constructor',
  '__proto__',
  'toString',
  '',
  'tools/call/extra',
];

export const TASK_METHODS = ['tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/list', 'tasks/update', 'tools/call'];

/** Arbitrary JSON of bounded size: what a hostile client puts where a field should be. */
export const anyJson = fc.jsonValue({ maxDepth: 3 });

/** A field's good value, or anything at all. */
export const field = <T>(good: fc.Arbitrary<T>, goodWeight = 3) =>
  fc.oneof({ weight: goodWeight, arbitrary: good }, { weight: 1, arbitrary: anyJson });

const meta = fc.oneof(
  fc.constant(undefined),
  fc.record({ progressToken: field(fc.oneof(fc.string(), fc.integer())) }, { requiredKeys: [] }),
  anyJson,
);

export interface Vocabulary {
  /** Tool and prompt names to pick from (real ones and invented). */
  names: readonly string[];
  uris: readonly string[];
  /** Good tool arguments to pick from, beside arbitrary dictionaries. */
  arguments?: ReadonlyArray<Record<string, unknown>>;
  /** Task ids to pick from (real ones the test made, forged ones); empty: no task fields. */
  taskIds?: () => readonly string[];
}

/** A task's `params.task` and its id fields, good or hostile. */
function taskFields(taskIds: () => readonly string[]): Record<string, fc.Arbitrary<unknown>> {
  const taskId = fc.oneof(
    fc.nat().map((n) => taskIds()[n % Math.max(1, taskIds().length)] ?? 'none'),
    fc.string(),
  );
  return {
    task: field(fc.record({ ttl: field(fc.oneof(fc.nat({ max: 60_000 }), fc.integer())) }, { requiredKeys: [] })),
    taskId: field(taskId),
    inputResponses: field(fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { maxKeys: 2 })),
  };
}

export function paramsFor(vocabulary: Vocabulary): fc.Arbitrary<unknown> {
  const { names, uris, taskIds, arguments: good = [{ text: 'fuzz' }, { a: 1, b: 2 }] } = vocabulary;
  const shaped = fc.record(
    {
      _meta: meta,
      cursor: field(fc.string()),
      name: field(fc.constantFrom(...names)),
      arguments: field(
        fc.oneof(...good.map((a) => fc.constant(a)), fc.dictionary(fc.string(), anyJson, { maxKeys: 4 })),
      ),
      uri: field(fc.constantFrom(...uris)),
      level: field(fc.constantFrom('debug', 'info', 'emergency', 'loud')),
      protocolVersion: field(fc.constantFrom('2025-06-18', '2025-11-25', '2025-03-26', '1999-01-01')),
      capabilities: field(fc.constant({})),
      requestId: field(fc.oneof(fc.string(), fc.integer())),
      ref: field(
        fc.record({
          type: fc.constantFrom('ref/prompt', 'ref/resource', 'ref/other'),
          name: fc.string(),
          uri: fc.constantFrom(...uris),
        }),
      ),
      argument: field(fc.record({ name: fc.string(), value: fc.string() })),
      notifications: field(
        fc.record({
          toolsListChanged: fc.boolean(),
          resourceSubscriptions: fc.array(fc.constantFrom(...uris), { maxLength: 2 }),
        }),
      ),
      requestState: field(fc.string()),
      ...(taskIds ? taskFields(taskIds) : {}),
    },
    { requiredKeys: [] },
  );
  return fc.oneof(
    { weight: 6, arbitrary: shaped },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: anyJson },
  );
}

export const requestId = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()) },
  { weight: 1, arbitrary: anyJson },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/**
 * A JSON-RPC message of one of `methods`, every part good or hostile; `envelopeWeight` is how much
 * likelier a good `jsonrpc` and `method` are than hostile ones (raise it to reach deeper than the door).
 */
export function messageOf(
  methods: readonly string[],
  vocabulary: Vocabulary,
  envelopeWeight = 3,
): fc.Arbitrary<Record<string, unknown>> {
  return fc.constantFrom(...methods).chain((method) =>
    fc.record(
      {
        jsonrpc: field(fc.constant('2.0'), envelopeWeight),
        id: requestId,
        method: field(fc.constant(method), envelopeWeight),
        params: paramsFor(vocabulary),
      },
      { requiredKeys: ['jsonrpc', 'method'] },
    ),
  );
}

/** Bodies that are not JSON-RPC at all. */
export const rawBody = fc.oneof(
  fc.string(),
  fc.constantFrom('', '{', '[]', 'null', '[[[[', '{"jsonrpc":"2.0"}', '"x"', '12'),
);

/** Every JSON-RPC message in a reply body, by its content type. */
export function repliesOf(contentType: string, text: string): unknown[] {
  if (contentType.startsWith('text/event-stream')) {
    return parseSse(text)
      .filter((e) => e.data !== '')
      .map((e) => JSON.parse(e.data) as unknown);
  }
  const value = JSON.parse(text) as unknown;
  return Array.isArray(value) ? value : [value];
}

/**
 * A reply is a JSON-RPC message; an error of the gateway's names its table entry, with the
 * entry's code, and (when `status` is not 200) the entry's HTTP status.
 */
export function checkMessage(m: unknown, status = 200): void {
  expect(typeof m).toBe('object');
  const r = m as Record<string, unknown>;
  expect(r.jsonrpc).toBe('2.0');
  if ('method' in r) return; // a notification or request on an SSE reply (progress, logging)
  expect('id' in r).toBe(true);
  expect('result' in r !== 'error' in r).toBe(true);
  if (!('error' in r)) return;
  const error = r.error as { code: unknown; message: unknown; data?: { type?: string } };
  expect(Number.isInteger(error.code)).toBe(true);
  expect(typeof error.message).toBe('string');
  const type = error.data?.type;
  // Upstreams' own errors pass through in-band; every error of the gateway's names its table entry.
  if (type === undefined) {
    expect(status).toBe(200);
    return;
  }
  expect(Object.keys(ERRORS)).toContain(type);
  const entry = ERRORS[type as ErrorName];
  expect(error.code).toBe(entry.code);
  if (status !== 200) expect(status).toBe(entry.httpStatus);
}

/** A reply of the HTTP endpoints: its status from the table, its body JSON-RPC, 5xx only where the table says. */
export function checkReply(status: number, contentType: string, text: string): void {
  if (status === 202) {
    expect(text).toBe('');
    return;
  }
  expect(STATUSES, `${status} ${text}`).toContain(status);
  expect(contentType, `${status} ${text}`).toMatch(/^(application\/json|text\/event-stream)/);
  const messages = repliesOf(contentType, text);
  expect(messages.length).toBeGreaterThan(0);
  for (const m of messages) checkMessage(m, status);
  if (status >= 500) {
    // Only where the table says so: a store or limit that tells the client to come back.
    for (const m of messages)
      expect(ERRORS[(m as { error: { data: { type: ErrorName } } }).error.data.type].httpStatus).toBeGreaterThanOrEqual(
        500,
      );
  }
}

export type Era = 'session' | 'forged-session' | 'no-session' | 'modern' | 'modern-bad-headers';
export type Shape = 'one' | 'batch' | 'raw';

/** One POST to the MCP endpoint: its body and the headers its era calls for. */
export interface HttpCase {
  era: Era;
  /** A subscriptions/listen request: its reply is a stream that stays open. */
  listens: boolean;
  body: string;
  headers: Record<string, string>;
}

/** The message with a 2026-07-28 request's `_meta` (`base`) under its own `_meta` keys. */
function modernise(m: Record<string, unknown>, base: Record<string, unknown>): Record<string, unknown> {
  const params =
    typeof m.params === 'object' && m.params !== null && !Array.isArray(m.params)
      ? (m.params as Record<string, unknown>)
      : {};
  const own = typeof params._meta === 'object' && params._meta !== null ? params._meta : {};
  return { ...m, params: { ...params, _meta: { ...base, ...own } } };
}

export interface CaseOptions {
  /** The MCP-Protocol-Version a session's request carries. */
  sessionVersion?: (n: number) => string;
  /** The `_meta` of 2026-07-28 requests: MODERN_META unless a test's client declares more. */
  statelessMeta?: Record<string, unknown>;
}

/**
 * The POST for generated messages in an era: a real session of `sessions` or a forged one, or a
 * 2026-07-28 request whose headers mirror its body (or, for `modern-bad-headers`, do not).
 */
export function httpCase(
  parts: { era: Era; shape: Shape; messages: Array<Record<string, unknown>>; raw: string; session: number },
  sessions: readonly string[],
  options: CaseOptions = {},
): HttpCase {
  const { sessionVersion = (n: number) => (n % 3 === 0 ? '2025-03-26' : '2025-06-18'), statelessMeta = MODERN_META } =
    options;
  const { era: e, shape, messages, raw, session } = parts;
  const headers: Record<string, string> = {};
  if (e === 'session') headers['mcp-session-id'] = sessions[session % sessions.length]!;
  if (e === 'forged-session') headers['mcp-session-id'] = `forged-${session}`;
  if (e.startsWith('session') || e === 'forged-session') headers['mcp-protocol-version'] = sessionVersion(session);
  let items = messages;
  if (e.startsWith('modern')) {
    items = items.map((m) => modernise(m, statelessMeta));
    const first = items[0]!;
    const params = first.params as Record<string, unknown>;
    headers['mcp-protocol-version'] = MODERN_VERSION;
    headers['mcp-method'] = e === 'modern' ? String(first.method) : 'tools/list';
    const name = params.name ?? params.uri ?? params.taskId;
    if (typeof name === 'string' && /^[\x21-\x7e]*$/.test(name))
      headers['mcp-name'] = e === 'modern' ? name : `${name}x`;
  }
  const body = shape === 'raw' ? raw : JSON.stringify(shape === 'batch' ? items : items[0]);
  return { era: e, body, headers, listens: items[0]!.method === 'subscriptions/listen' };
}

/** A listen stream stays open by design: its first message (the acknowledgement) is enough. */
async function firstEvents(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!/\ndata: \{/.test(`\n${text}`) || !text.endsWith('\n\n')) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

/** POSTs a case to the MCP endpoint; its reply must come within `hangMs` and pass `checkReply`. */
export async function postCase(url: URL, c: HttpCase, hangMs: number): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...c.headers },
      body: c.body,
      signal: AbortSignal.timeout(hangMs),
    });
  } catch (err) {
    throw new Error(`no reply within ${hangMs} ms (or the connection broke): ${String(err)}`);
  }
  const contentType = res.headers.get('content-type') ?? '';
  const text = c.listens && contentType.startsWith('text/event-stream') ? await firstEvents(res) : await res.text();
  checkReply(res.status, contentType, text);
}
