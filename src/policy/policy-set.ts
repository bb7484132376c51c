// A Cedar policy file, compiled once at load: parsed, validated (strict) against the generated
// schema (cedar-schema.ts), each policy known by its @id annotation (else Cedar's policyN). A file
// that does not parse or validate is a PolicyFileError naming the file, line and column, and
// nothing of it runs. Decisions use the preparsed set (no re-parse per request).
import { readFileSync } from 'node:fs';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { listingPolicy } from './listing.js';
import { cedarSchema, NAMESPACE, type PolicyAction, type ResourceType } from './cedar-schema.js';

export class PolicyFileError extends Error {}

type Value = string | boolean | number | readonly string[];

export type PolicyPrincipal =
  | {
      kind: 'client';
      id: string;
      name: string;
      scopes: readonly string[];
      claims: Readonly<Record<string, string>>;
      address: string;
    }
  | { kind: 'anonymous'; address: string };

export interface PolicyRequest {
  principal: PolicyPrincipal;
  action: PolicyAction;
  resource: { type: ResourceType; id: string; attrs: Readonly<Record<string, Value>> };
  context: { method: string; era: string; transport: string; hour: number; weekday: number; epoch: number };
  /** A call's arguments; undefined: not known (a list asks whether any arguments could be allowed). */
  arguments: Readonly<Record<string, string>> | undefined;
}

export interface Decision {
  allowed: boolean;
  /** The policies that decided: the permits that allowed, the forbids that denied; none: nothing permitted it. */
  policies: readonly string[];
}

const SCHEMA = cedarSchema();
const SCHEMA_NAME = 'mcpgw';
let schemaReady = false;
let sets = 0;

/** Line and column (1-based) of a byte offset, as Cedar reports spans. */
function position(text: string, byteOffset: number): string {
  const before = Buffer.from(text, 'utf8').subarray(0, byteOffset).toString('utf8');
  const lines = before.split('\n');
  return `${lines.length}:${lines[lines.length - 1]!.length + 1}`;
}

function described(file: string, text: string, errors: ReadonlyArray<cedar.DetailedError>): string {
  return errors
    .map((e) => {
      const at = e.sourceLocations?.[0];
      const where = at ? `${file}:${position(text, at.start)}` : file;
      const label = at?.label ? ` (${at.label})` : '';
      return `${where}: ${e.message}${label}${e.help ? `; ${e.help}` : ''}`;
    })
    .join('; ');
}

export class PolicySet {
  readonly #setId: string;

  private constructor(
    readonly file: string,
    /** The policies' ids, in the file's order. */
    readonly ids: readonly string[],
  ) {
    this.#setId = `mcpgw-${++sets}`;
  }

  /** Parses and validates `text`; throws PolicyFileError naming `file`, line and column. */
  static compile(text: string, file: string): PolicySet {
    if (!schemaReady) {
      const schema = cedar.preparseSchema(SCHEMA_NAME, SCHEMA);
      if (schema.type !== 'success')
        throw new Error(`the generated Cedar schema: ${described('schema', SCHEMA, schema.errors)}`);
      schemaReady = true;
    }
    const parsed = cedar.checkParsePolicySet({ staticPolicies: text });
    if (parsed.type !== 'success') throw new PolicyFileError(described(file, text, parsed.errors));
    const validated = cedar.validate({ schema: SCHEMA, policies: { staticPolicies: text } });
    if (validated.type !== 'success') throw new PolicyFileError(described(file, text, validated.errors));
    if (validated.validationErrors.length > 0)
      throw new PolicyFileError(
        described(
          file,
          text,
          validated.validationErrors.map((e) => e.error),
        ),
      );
    const parts = cedar.policySetTextToParts(text);
    if (parts.type !== 'success') throw new PolicyFileError(described(file, text, parts.errors));
    // Valid Cedar, but it denies everything: far more often a file caught half-written by a
    // reload (truncated, then written) or emptied by mistake than a wish; an explicit forbid says it.
    if (parts.policies.length === 0)
      throw new PolicyFileError(`${file}: holds no policy (to deny every request, write one forbid)`);
    const byId: Record<string, string> = {};
    parts.policies.forEach((policy, i) => {
      const json = cedar.policyToJson(policy);
      const id = (json.type === 'success' ? json.json.annotations?.id : undefined) ?? `policy${i}`;
      if (id in byId) throw new PolicyFileError(`${file}: two policies have the @id "${id}"`);
      byId[id] = policy;
    });
    const set = new PolicySet(file, Object.keys(byId));
    const ready = cedar.preparsePolicySet(set.#setId, { staticPolicies: byId });
    if (ready.type !== 'success') throw new PolicyFileError(described(file, text, ready.errors));
    const listing = Object.fromEntries(Object.entries(byId).map(([id, policy]) => [id, listingPolicy(policy)]));
    const listed = cedar.preparsePolicySet(`${set.#setId}-list`, { staticPolicies: listing });
    if (listed.type !== 'success') throw new PolicyFileError(described(file, text, listed.errors));
    return set;
  }

  /** Reads and compiles a policy file (unreadable: a PolicyFileError too). */
  static load(file: string): PolicySet {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new PolicyFileError(`${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
    return PolicySet.compile(text, file);
  }

  /** The decision for one request with its arguments known. */
  decide(request: PolicyRequest): Decision {
    return this.#decide(this.#setId, request, request.arguments ?? {});
  }

  /**
   * Whether some arguments could be allowed (a list's question: listing.ts): what decide() says
   * when no policy reads the arguments.
   */
  mayAllow(request: PolicyRequest): boolean {
    return this.#decide(`${this.#setId}-list`, request, {}).allowed;
  }

  #decide(setId: string, request: PolicyRequest, args: Readonly<Record<string, string>>): Decision {
    const answer = cedar.statefulIsAuthorized({
      ...call(request, args),
      preparsedPolicySetId: setId,
      preparsedSchemaName: SCHEMA_NAME,
      validateRequest: false,
    });
    // An evaluation error (none should pass strict validation) denies: the safe side.
    if (answer.type !== 'success') return { allowed: false, policies: [] };
    const { decision, diagnostics } = answer.response;
    return { allowed: decision === 'allow', policies: diagnostics.reason };
  }
}

type Json = cedar.CedarValueJson;

function uid(type: string, id: string): { type: string; id: string } {
  return { type: `${NAMESPACE}::${type}`, id };
}

/** The Cedar request and its entities: principal, resource, the arguments as an entity of tags. */
function call(request: PolicyRequest, args: Readonly<Record<string, string>>) {
  const p = request.principal;
  const principal: cedar.EntityJson & { uid: { type: string; id: string } } =
    p.kind === 'client'
      ? {
          uid: uid('Client', p.id),
          attrs: { name: p.name, scopes: [...p.scopes], address: p.address },
          parents: [],
          tags: { ...p.claims },
        }
      : { uid: uid('Anonymous', p.address), attrs: { address: p.address }, parents: [] };
  const resource = {
    uid: uid(request.resource.type, request.resource.id),
    attrs: request.resource.attrs as Record<string, Json>,
    parents: [],
  };
  const argumentsUid = uid('Arguments', 'call');
  return {
    principal: principal.uid,
    action: { type: `${NAMESPACE}::Action`, id: request.action },
    resource: resource.uid,
    context: { ...request.context, arguments: { __entity: argumentsUid } },
    entities: [principal, resource, { uid: argumentsUid, attrs: {}, parents: [], tags: { ...args } }],
  };
}

/** --check's word on a policy file: its problems (line and column), none when it compiles or none is named. */
export function policyProblems(file: string | undefined): string[] {
  if (file === undefined) return [];
  try {
    PolicySet.load(file);
    return [];
  } catch (err) {
    return [`authorization.policyFile: ${err instanceof Error ? err.message : String(err)}`];
  }
}
