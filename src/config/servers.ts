/**
 * The `servers` section: virtual servers, each a curated endpoint of its own (`path`) over the
 * gateway's catalog. It selects what it offers by globs over the exposed names (tools, prompts)
 * and URIs (resources, templates), overrides tools (name, title, description, annotations,
 * fixed and default arguments), and names who may use it (principals, scopes).
 *
 * What can be checked without the upstreams' catalogs is checked here; what needs them
 * (override targets exist, fixed arguments are in the schema, renames collide) is
 * gateway/server-views.ts's `viewProblems`, run at start-up after discovery and by --check.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { interceptorsSchema } from './interceptors.js';
import { serverCardSchema } from './server-cards.js';
import { toolSearchSchema } from './tool-search.js';
// A selection glob (`*`: any run of characters), matched as tool filters are.
export { globPattern } from './tool-filter.js';

const globs = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 512 }, maxItems: 1000 } as const;

export const toolOverrideSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'How one tool is presented on this server, keyed by its exposed name (prefix included).',
  properties: {
    name: {
      type: 'string',
      pattern: '^[A-Za-z0-9_.-]+$',
      maxLength: 128,
      description: "The tool's name on this server; the exposed name is no longer offered here.",
    },
    title: { type: 'string', maxLength: 512, description: 'Its title.' },
    description: { type: 'string', maxLength: 8192, description: 'Its description.' },
    annotations: {
      type: 'object',
      required: [],
      description: "Merged over the upstream's annotations (readOnlyHint, destructiveHint, ...).",
    },
    arguments: {
      type: 'object',
      additionalProperties: false,
      description: "Arguments set by the server; the call is then checked against the tool's full schema.",
      properties: {
        fixed: {
          type: 'object',
          required: [],
          default: {},
          description: 'Forced on every call whatever the client sent, and gone from the advertised inputSchema.',
        },
        defaults: {
          type: 'object',
          required: [],
          default: {},
          description: 'Filled in when the client leaves them out.',
        },
      },
      required: [],
      default: {},
    },
  },
  required: [],
} as const;

export const serverEntrySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: {
      type: 'string',
      pattern: '^[A-Za-z0-9_.-]+$',
      maxLength: 64,
      description: 'For logs and messages (default: the path); unique.',
    },
    path: {
      type: 'string',
      pattern: '^/[A-Za-z0-9._~/-]*$',
      maxLength: 256,
      description:
        "Its endpoint: not the main path, nor one of the gateway's own routes, nor another server's. A path added " +
        'by a reload is served only after a restart.',
    },
    tools: {
      ...globs,
      default: [],
      description:
        'Globs (*) over the exposed tool names (prefix included); what a server does not select does not exist ' +
        'there. A kind left out (or empty) offers nothing of that kind.',
    },
    prompts: { ...globs, default: [], description: 'Globs over the exposed prompt names.' },
    resources: {
      ...globs,
      default: [],
      description: 'Globs over resource URIs and template URIs as clients see them (e.g. "docs-eu+*").',
    },
    skills: {
      ...globs,
      description:
        'Globs over the skills\' SKILL.md URIs as clients see them (e.g. "skill://docs/pdf-*"); a selected skill\'s ' +
        'files and directories come with it. None: no skills. Overrides do not apply to skills.',
    },
    overrides: {
      type: 'object',
      additionalProperties: toolOverrideSchema,
      required: [],
      default: {},
      description:
        'Tools presented otherwise on this server, by exposed name (the tool must be one the server selects).',
    },
    principals: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description:
        'API-key names or token principals ("<issuer> <subject>", or the subject alone) allowed here; others get 403 ' +
        'SERVER_FORBIDDEN. None listed: anyone authenticated. Needs auth on.',
    },
    requiredScopes: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: "The key's (or token's) scopes must include these; else 403 SERVER_FORBIDDEN. Needs auth on.",
    },
    toolSearch: toolSearchSchema,
    interceptors: interceptorsSchema,
    card: serverCardSchema,
  },
  required: ['path'],
} as const;

export const serversSchema = {
  type: 'array',
  items: serverEntrySchema,
  maxItems: 256,
  default: [],
  description: 'Virtual servers: curated endpoints of their own over the same catalog. See docs/virtual-servers.md.',
} as const;

export type ServerEntryConfig = FromSchema<typeof serverEntrySchema>;
export type ToolOverrideConfig = FromSchema<typeof toolOverrideSchema>;

/** Paths that are the gateway's own: a virtual server cannot take them. */
const RESERVED = [/^\/healthz$/, /^\/readyz$/, /^\/metrics$/, /^\/status/, /^\/\.well-known\//];

/**
 * One server per path, none on the main endpoint or the gateway's own routes, unique names,
 * overrides whose new names do not clash with each other, an argument not both fixed and
 * defaulted, principals only where something authenticates them.
 */
export function serversChecks(servers: unknown, mainPath: unknown, authMode: unknown, problems: string[]): void {
  if (!Array.isArray(servers)) return;
  const paths = new Map<string, number>();
  const names = new Map<string, number>();
  (servers as ServerEntryConfig[]).forEach((s, i) => {
    if (typeof s !== 'object' || s === null || typeof s.path !== 'string') return;
    const at = `servers[${i}]`;
    const path = s.path.length > 1 ? s.path.replace(/\/+$/, '') : s.path;
    const seen = paths.get(path);
    if (seen !== undefined)
      problems.push(
        `${at}.path: "${s.path}" is already the path of servers[${seen}]; each virtual server needs a path of its own`,
      );
    paths.set(path, i);
    if (path === mainPath)
      problems.push(
        `${at}.path: "${s.path}" is the main endpoint (top-level \`path\`), which serves the whole catalog`,
      );
    if (RESERVED.some((r) => r.test(path))) problems.push(`${at}.path: "${s.path}" is one of the gateway's own routes`);
    const name = s.name ?? s.path;
    const named = names.get(name);
    if (named !== undefined) problems.push(`${at}.name: "${name}" is already used by servers[${named}]`);
    names.set(name, i);
    if (authMode === 'none' && (s.principals?.length || s.requiredScopes?.length)) {
      problems.push(
        `${at}: principals and requiredScopes need auth.mode api-key, jwt or introspection (auth.mode is "none": ` +
          `nobody is authenticated)`,
      );
    }
    overrideChecks(s, at, problems);
  });
}

function overrideChecks(s: ServerEntryConfig, at: string, problems: string[]): void {
  if (typeof s.overrides !== 'object' || s.overrides === null) return;
  const renamed = new Map<string, string>();
  for (const [key, o] of Object.entries(s.overrides)) {
    if (typeof o !== 'object' || o === null) continue;
    const where = `${at}.overrides.${key}`;
    if (typeof o.name === 'string') {
      const other = renamed.get(o.name);
      if (other !== undefined) problems.push(`${where}.name: "${o.name}" is also the new name of ${other}`);
      renamed.set(o.name, key);
    }
    const fixed = o.arguments?.fixed ?? {};
    for (const arg of Object.keys(o.arguments?.defaults ?? {})) {
      if (arg in fixed)
        problems.push(
          `${where}.arguments.defaults.${arg}: is also fixed (a fixed argument always wins; drop one of them)`,
        );
    }
  }
}
