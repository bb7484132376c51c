/**
 * The shape of `params` for every method a client may send the gateway, as the MCP schema
 * types them (2025-03-26 … 2026-07-28): objects where it says object, strings and numbers where
 * it says so. Only the fields the gateway or an upstream reads are typed; anything else passes,
 * so newer fields of a revision do not break older ones. Compiled once at load; the hot path
 * runs one generated function per message.
 *
 * Why here and not at each consumer: a `_meta` that is a string reached an upstream whose SDK
 * dropped the request unanswered, holding a worker slot until the call timed out.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LIST_METHODS } from './list-methods.js';

type Schema = Record<string, unknown>;

const ID = { type: ['string', 'integer'] };
const STRING = { type: 'string' };
const OBJECT = { type: 'object' };
const BOOLEAN = { type: 'boolean' };

/**
 * 2026-07-28's SubscriptionFilter, a listen request's `notifications`: without it (or of another
 * shape) a listen would hold a stream slot that carries nothing the client asked for.
 */
const SUBSCRIPTION_FILTER = {
  type: 'object',
  properties: {
    toolsListChanged: BOOLEAN,
    promptsListChanged: BOOLEAN,
    resourcesListChanged: BOOLEAN,
    resourceSubscriptions: { type: 'array', items: STRING },
    taskIds: { type: 'array', items: STRING },
  },
};

/** `_meta` of any request or notification: an object; its progress token a string or integer. */
const META = { type: 'object', properties: { progressToken: ID } };

function params(properties: Schema, required: string[] = []): Schema {
  return { type: 'object', properties: { _meta: META, ...properties }, required };
}

const LIST = params({ cursor: STRING });

const SCHEMAS: ReadonlyMap<string, Schema> = new Map<string, Schema>([
  [
    'initialize',
    params(
      {
        protocolVersion: STRING,
        capabilities: OBJECT,
        clientInfo: { type: 'object', properties: { name: STRING, version: STRING } },
      },
      ['protocolVersion'],
    ),
  ],
  ['ping', params({})],
  ['server/discover', params({})],
  ...[...LIST_METHODS.keys()].map((method): [string, Schema] => [method, LIST]),
  ['tools/call', params({ name: STRING, arguments: OBJECT, inputResponses: OBJECT, requestState: STRING }, ['name'])],
  ['prompts/get', params({ name: STRING, arguments: OBJECT, inputResponses: OBJECT, requestState: STRING }, ['name'])],
  ['resources/read', params({ uri: STRING, inputResponses: OBJECT, requestState: STRING }, ['uri'])],
  ['resources/subscribe', params({ uri: STRING }, ['uri'])],
  ['resources/unsubscribe', params({ uri: STRING }, ['uri'])],
  ['logging/setLevel', params({ level: STRING }, ['level'])],
  [
    'completion/complete',
    params(
      {
        ref: { type: 'object', properties: { type: STRING, name: STRING, uri: STRING }, required: ['type'] },
        argument: { type: 'object', properties: { name: STRING, value: STRING }, required: ['name', 'value'] },
        context: OBJECT,
      },
      ['ref', 'argument'],
    ),
  ],
  ['subscriptions/listen', params({ notifications: SUBSCRIPTION_FILTER }, ['notifications'])],
  ['tasks/get', params({ taskId: STRING }, ['taskId'])],
  ['tasks/result', params({ taskId: STRING }, ['taskId'])],
  ['tasks/cancel', params({ taskId: STRING }, ['taskId'])],
  ['tasks/update', params({ taskId: STRING, inputResponses: OBJECT }, ['taskId'])],
  ['tasks/list', LIST],
  ['notifications/initialized', params({})],
  ['notifications/cancelled', params({ requestId: ID, reason: STRING })],
  [
    'notifications/progress',
    params({ progressToken: ID, progress: { type: 'number' }, total: { type: 'number' }, message: STRING }, [
      'progressToken',
      'progress',
    ]),
  ],
  ['notifications/roots/list_changed', params({})],
]);

/**
 * ajv's code optimiser counts the generated code's variable names (err538, data244, …) as keys
 * of fresh `{}` objects: a big schema gives V8's empty-object map more than the 1536 transitions
 * it keeps, and from then on every object literal `{}` whose first key is new to it (HTTP
 * headers, reply headers, records) gets maps of its own and each property added costs a new map:
 * about 60× slower property adds for the rest of the process. The optimiser only drops unused
 * variables: the validators decide exactly the same without it.
 */
export const NO_NAME_POLLUTION = { optimize: false } as const;

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true, code: NO_NAME_POLLUTION });
const VALIDATORS = new Map<string, ValidateFunction>();
for (const [method, schema] of SCHEMAS) VALIDATORS.set(method, ajv.compile(schema));

function describe(error: ErrorObject): string {
  const where = `params${error.instancePath.replaceAll('/', '.')}`;
  if (error.keyword === 'required')
    return `${where}.${String((error.params as { missingProperty: string }).missingProperty)} is required`;
  return `${where} ${error.message ?? 'is invalid'}`;
}

/**
 * Why `params` does not fit `method`, or undefined when it does (or when the method is not one
 * the gateway knows: that is answered as method-not-found, not here). An absent `params` is
 * checked as `{}`, so a method with required fields still says which one is missing.
 */
export function paramsProblem(method: string, value: Record<string, unknown> | undefined): string | undefined {
  const validate = VALIDATORS.get(method);
  if (!validate || validate(value ?? {})) return undefined;
  const error = validate.errors?.[0];
  return error ? describe(error) : 'params are invalid';
}

/** Every method whose params this module knows: the methods the gateway routes. */
export function isKnownMethod(method: string): boolean {
  return VALIDATORS.has(method);
}
