import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Logger } from 'pino';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import { PatternRefused, PatternTooCostly, compilingSchema, linearRegExp, withinBudget } from './linear-regexp.js';
import { uniqueItemsKeyword } from './unique-items.js';

/** A tool's arguments check, as the catalog keeps it per tool: throws INVALID_PARAMS. */
export interface ArgumentCheck {
  check(args: unknown): void;
}

/** What a catalog asks for while it is built: the check of each tool (none: nothing to check). */
export interface ArgumentChecks {
  forTool(upstream: string, tool: string, inputSchema: unknown): ArgumentCheck | undefined;
}

/**
 * ajv turns a schema into code: its compile time grows with the schema (about 4 ms per KiB here,
 * unoptimised), and an upstream decides how big its schemas are. A larger one goes unchecked.
 */
export const MAX_SCHEMA_CHARS = 65_536;

/**
 * What matching one call's strings against its tool's patterns may cost, in pattern units x
 * characters (see linear-regexp.ts): up to ~1 s where RE2's DFA gives up on a hostile pattern,
 * ms otherwise. An 8-unit pattern (base64) takes 131,072 characters, a 26-unit one
 * (`^[0-9a-f]{24}$`) 1,600 ids of 24.
 */
export const MAX_PATTERN_WORK = 1 << 20;

/** Errors sent back in `error.data.errors`; ajv stops at the first one anyway (no allErrors). */
const MAX_REPORTED_ERRORS = 5;

/**
 * Every compile leaves values (patterns, referenced validators) in its ajv instance for good; a
 * fresh instance after this many bounds what an upstream changing its schemas can pile up.
 */
const COMPILES_PER_INSTANCE = 64;

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
/** The one spelling ajv's draft-07 meta-schema answers to (some generators write https). */
const DRAFT_07_ID = 'http://json-schema.org/draft-07/schema#';

const AJV_OPTIONS: Options = {
  // Real-world schemas carry keywords of their own (x-mcp-header, examples in odd places).
  strict: false,
  // allErrors lets a hostile input make ajv collect an error per element; the first one will do.
  allErrors: false,
  // Read only: the upstream gets the arguments exactly as the client sent them.
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  // Tools' $ids must not collide with each other in the instance's registry.
  addUsedSchema: false,
  logger: false,
  // The optimiser's passes cost more than linear time on big schemas, for a few ns per call.
  // Patterns are an upstream's: RE2's time is linear, V8's can be exponential in the input.
  code: { optimize: false, regExp: linearRegExp },
};

// ajv-formats is CommonJS: under NodeNext its default export arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

const EMPTY_ARGUMENTS: Record<string, never> = Object.freeze({});

/** A schema that says nothing but "an object": no compiled code, only the type. */
const OBJECT_ONLY: ArgumentCheck = {
  check(args: unknown): void {
    if (args === undefined || isObject(args)) return;
    throw invalidArguments([
      {
        instancePath: '',
        schemaPath: '#/type',
        keyword: 'type',
        params: { type: 'object' },
        message: 'must be object',
      },
    ]);
  },
};

const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description']);

function objectOnly(schema: Record<string, unknown>): boolean {
  if (schema.type !== 'object') return false;
  for (const key of Object.keys(schema)) {
    if (key === 'type' || ANNOTATIONS.has(key)) continue;
    if (key === 'properties' && isObject(schema.properties) && Object.keys(schema.properties).length === 0) continue;
    if (key === 'additionalProperties' && schema.additionalProperties === true) continue;
    return false;
  }
  return true;
}

function invalidArguments(errors: readonly ErrorObject[]): GatewayError {
  const first = errors[0];
  const where = first?.instancePath ? `arguments${first.instancePath}` : 'arguments';
  return new GatewayError(
    'INVALID_PARAMS',
    `Invalid arguments: ${where} ${first?.message ?? 'do not match the tool input schema'}`,
    {
      errors: errors
        .slice(0, MAX_REPORTED_ERRORS)
        .map((e) => ({ instancePath: e.instancePath, keyword: e.keyword, message: e.message, params: e.params })),
    },
  );
}

/** A tool whose schema has a pattern RE2 cannot take: its calls are refused, not let through unchecked. */
function refusedTool(refused: PatternRefused): GatewayError {
  const why = `the gateway cannot check them against this tool's input schema: its ${refused.message}`;
  return new GatewayError('INVALID_PARAMS', `Invalid arguments: ${why}`, { pattern: refused.pattern });
}

function tooCostly(err: PatternTooCostly): GatewayError {
  const why = `${err.message} in one call (${MAX_PATTERN_WORK} pattern units x characters)`;
  return new GatewayError('INVALID_PARAMS', `Invalid arguments: ${why}`, { pattern: err.pattern, length: err.length });
}

/** One tool's schema, compiled on the first call that needs it. */
class ToolArguments implements ArgumentCheck {
  /** undefined: not compiled yet; null: cannot be compiled (calls go unchecked); a refusal: calls are refused. */
  #validate: ValidateFunction | PatternRefused | null | undefined;

  constructor(
    private readonly compiler: SchemaCompiler,
    readonly upstream: string,
    readonly tool: string,
    public schema: Record<string, unknown>,
    /** Of the schema's JSON (undefined: it has none): what says a refreshed schema is unchanged. */
    readonly json: { length: number; digest: string } | undefined,
  ) {}

  check(args: unknown): void {
    let validate = this.#validate;
    if (validate === undefined) validate = this.#validate = this.compiler.compile(this);
    if (validate === null) return;
    if (validate instanceof PatternRefused) throw refusedTool(validate);
    const run = validate;
    let valid: boolean;
    try {
      valid = withinBudget(MAX_PATTERN_WORK, () => run(args === undefined ? EMPTY_ARGUMENTS : args) as boolean);
    } catch (err) {
      if (err instanceof PatternTooCostly) throw tooCostly(err);
      throw err;
    }
    if (!valid) throw invalidArguments(validate.errors ?? []);
  }
}

/** ajv instances by dialect, renewed every COMPILES_PER_INSTANCE compiles. */
class SchemaCompiler {
  #draft07: { ajv: Ajv; compiles: number } | undefined;
  #draft2020: { ajv: Ajv; compiles: number } | undefined;

  constructor(private readonly log: Logger) {}

  compile(tool: ToolArguments): ValidateFunction | PatternRefused | null {
    if (tool.json === undefined || tool.json.length > MAX_SCHEMA_CHARS) {
      this.#unchecked(
        tool,
        `the input schema is larger than ${MAX_SCHEMA_CHARS} characters of JSON (or cannot be serialised)`,
      );
      return null;
    }
    // An $async schema validates to a promise, which would pass every call.
    if (tool.schema.$async !== undefined) {
      this.#unchecked(tool, '$async schemas are not supported');
      return null;
    }
    const $schema = tool.schema.$schema;
    const draft07 = typeof $schema === 'string' && DRAFT_07.test($schema);
    const schema = draft07 && $schema !== DRAFT_07_ID ? { ...tool.schema, $schema: DRAFT_07_ID } : tool.schema;
    const ajv = this.#instance(draft07);
    try {
      return compilingSchema(() => ajv.compile(schema));
    } catch (err) {
      if (err instanceof PatternRefused) {
        this.log.warn(
          { upstream: tool.upstream, tool: tool.tool, pattern: err.pattern, err: err.message },
          'tool input schema has a pattern the gateway cannot check: calls to this tool are refused',
        );
        return err;
      }
      // A schema too deep for ajv's recursion throws a RangeError: as uncompilable as any other.
      this.#unchecked(tool, err instanceof Error ? err.message : String(err));
      return null;
    } finally {
      // The compiled function keeps what it needs; the instance's cache need not keep the schema.
      try {
        ajv.removeSchema(schema);
      } catch {
        // A malformed $id (not a string) makes ajv throw here too; the compile already failed on it.
      }
    }
  }

  /** MCP's default dialect is 2020-12 (SEP-1613); the SDK's zod schemas say draft-07. Others fail to compile. */
  #instance(draft07: boolean): Ajv {
    let instance = draft07 ? this.#draft07 : this.#draft2020;
    if (!instance || instance.compiles >= COMPILES_PER_INSTANCE) {
      const ajv = draft07 ? new Ajv(AJV_OPTIONS) : new Ajv2020(AJV_OPTIONS);
      // ajv's own uniqueItems compares every pair of items: quadratic in a client's array.
      instance = { ajv: addFormats(ajv).removeKeyword('uniqueItems').addKeyword(uniqueItemsKeyword), compiles: 0 };
      if (draft07) this.#draft07 = instance;
      else this.#draft2020 = instance;
    }
    instance.compiles++;
    return instance.ajv;
  }

  #unchecked(tool: ToolArguments, why: string): void {
    this.log.warn(
      { upstream: tool.upstream, tool: tool.tool, err: why },
      'tool input schema cannot be compiled: calls to this tool go unchecked',
    );
  }
}

export interface ArgumentValidatorOptions {
  log: Logger;
  /** Whether an upstream's tools are checked (`upstreams[].validateArguments`). */
  enabled(upstream: string): boolean;
}

/**
 * Checks tools/call arguments against each tool's inputSchema before they reach the upstream.
 * One per virtual server, across catalog versions: a tool whose schema did not change keeps its
 * compiled check (and a schema that cannot compile is reported once, not once per refresh).
 */
export class ArgumentValidator {
  readonly #compiler: SchemaCompiler;
  /** The checks of the catalog in use, by upstream and tool. */
  #current = new Map<string, ToolArguments>();

  constructor(private readonly options: ArgumentValidatorOptions) {
    this.#compiler = new SchemaCompiler(options.log);
  }

  /** The checks for the next catalog; `commit` once that catalog is in use (a failed build is dropped). */
  nextVersion(): ArgumentChecks & { commit(): void } {
    const next = new Map<string, ToolArguments>();
    return {
      forTool: (upstream, tool, inputSchema) => {
        if (!isObject(inputSchema) || !this.options.enabled(upstream)) return undefined;
        if (objectOnly(inputSchema)) return OBJECT_ONLY;
        const key = `${upstream}\u0000${tool}`;
        const entry = this.#reuse(this.#current.get(key), inputSchema, upstream, tool);
        next.set(key, entry);
        return entry;
      },
      commit: () => {
        this.#current = next;
      },
    };
  }

  /**
   * Checks for a catalog that lives beside the gateway's (a session's own, see SessionCatalogs):
   * the current version's compiled check where the schema is the same, a new one otherwise, and
   * nothing recorded, so the shared catalog's versions stay as they were.
   */
  detached(): ArgumentChecks {
    return {
      forTool: (upstream, tool, inputSchema) => {
        if (!isObject(inputSchema) || !this.options.enabled(upstream)) return undefined;
        if (objectOnly(inputSchema)) return OBJECT_ONLY;
        return this.#reuse(this.#current.get(`${upstream}\u0000${tool}`), inputSchema, upstream, tool);
      },
    };
  }

  /** The previous version's check while the schema is unchanged (same object, or the same JSON), else a new one. */
  #reuse(
    previous: ToolArguments | undefined,
    schema: Record<string, unknown>,
    upstream: string,
    tool: string,
  ): ToolArguments {
    if (previous?.schema === schema) return previous;
    const json = jsonOf(schema);
    if (previous?.json !== undefined && previous.json.digest === json?.digest) {
      previous.schema = schema;
      return previous;
    }
    return new ToolArguments(this.#compiler, upstream, tool, schema, json);
  }
}

/** A digest rather than the text: an upstream's oversized schemas are not kept twice. */
function jsonOf(schema: Record<string, unknown>): { length: number; digest: string } | undefined {
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    // Too deep for the stack, or not plain data.
    return undefined;
  }
  return { length: text.length, digest: createHash('sha256').update(text).digest('base64') };
}
