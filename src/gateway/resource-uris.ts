// `upstreams[].resources: { uris: prefixed }`: an upstream's resource URIs as clients see them.
// The scheme is `<prefix>+<original URI>` (`docs+file:///a.md`, `a+demo://resource/{id}`): a
// literal in front, so a template stays a template and the original comes back by cutting the
// prefix off. Two copies of one server, each with its own prefix, then offer distinct URIs.
// An MCP Apps UI resource (`ui://...`) keeps its scheme, since hosts look for `ui://`: the prefix
// goes inside it, `ui://<prefix>+<rest>` (`ui://map+cesium-map/mcp-app.html`). A prefix is
// [A-Za-z0-9_-]* (no `+`, no `:`), so either form has one inverse, and neither can be mistaken
// for the other. A skill's files (`skill://...`, SEP-2640) keep theirs too, the prefix a first path
// segment: `skill://<prefix>/<path>` (`skill://docs/pdf-forms/SKILL.md`).
// A tool's `_meta` references to its UI resource get the same rewrite, so the tool
// names the URI the resource is listed and read under.
// Outward (results, notifications, tool lists) URIs get the prefix here; inward, the catalog's
// routes hold the original of each URI a client names. All of it is a function of the upstream's
// prefix alone, so every replica rewrites alike.
import { isObject, type JsonRpcNotification } from '../jsonrpc/messages.js';
import type { McpResult } from '../contracts/upstream.js';

export const URI_SEPARATOR = '+';
/** The scheme of an MCP Apps UI resource, spelled as ext-apps' hosts test it (`startsWith('ui://')`). */
export const UI_SCHEME = 'ui://';
/** ext-apps' keys of a tool's UI resource: `_meta.ui.resourceUri`, and the older flat `_meta["ui/resourceUri"]`. */
export const UI_META_KEY = 'ui';
export const LEGACY_UI_RESOURCE_KEY = 'ui/resourceUri';

/** The scheme of a SEP-2640 skill's files (`skill://<path>/SKILL.md`), which hosts look for as they do `ui://`. */
export const SKILL_SCHEME = 'skill://';
export function isSkillUri(uri: string): boolean {
  return uri.startsWith(SKILL_SCHEME);
}
/**
 * Where the prefix goes in a URI of each scheme that keeps its place: a skill's gets a path segment of its own
 * (`skill://<prefix>/<path>`), since SEP-2640 has a skill's name be its directory's last segment, which
 * `<prefix>+` would change; a UI resource's, `ui://<prefix>+<rest>`.
 */
const KEPT_SCHEMES = [
  [UI_SCHEME, URI_SEPARATOR],
  [SKILL_SCHEME, '/'],
] as const;

export function prefixedUri(prefix: string, uri: string): string {
  for (const [scheme, separator] of KEPT_SCHEMES)
    if (uri.startsWith(scheme)) return `${scheme}${prefix}${separator}${uri.slice(scheme.length)}`;
  return `${prefix}${URI_SEPARATOR}${uri}`;
}

/** The inverse of prefixedUri: the upstream's own URI, or undefined when `uri` does not carry `prefix`. */
export function unprefixedUri(prefix: string, uri: string): string | undefined {
  for (const [scheme, separator] of KEPT_SCHEMES) {
    const kept = `${scheme}${prefix}${separator}`;
    if (uri.startsWith(kept)) return `${scheme}${uri.slice(kept.length)}`;
  }
  const plain = `${prefix}${URI_SEPARATOR}`;
  return uri.startsWith(plain) ? uri.slice(plain.length) : undefined;
}

/** The UI resource a tool's `_meta` names as ext-apps' hosts find it (the nested key first), if a `ui://` string. */
export function uiResourceOf(tool: Record<string, unknown>): string | undefined {
  const meta = tool._meta;
  if (!isObject(meta)) return undefined;
  const uri = isObject(meta[UI_META_KEY]) ? meta[UI_META_KEY].resourceUri : undefined;
  const named = uri ?? meta[LEGACY_UI_RESOURCE_KEY];
  return typeof named === 'string' && named.startsWith(UI_SCHEME) ? named : undefined;
}

/**
 * A listed tool whose `_meta` names its UI resource, with that reference (both keys) as the client
 * knows the resource. A reference that is not a `ui://` string is left as it is: it names no
 * resource the gateway rewrote, and a host refuses it whatever the gateway does.
 */
export function toolWithUiUris(prefix: string, tool: Record<string, unknown>): Record<string, unknown> {
  const meta = tool._meta;
  if (!isObject(meta)) return tool;
  const rewrite = (v: unknown) => (typeof v === 'string' && v.startsWith(UI_SCHEME) ? prefixedUri(prefix, v) : v);
  const ui = meta[UI_META_KEY];
  const nested = isObject(ui) ? rewrite(ui.resourceUri) : undefined;
  const legacy = rewrite(meta[LEGACY_UI_RESOURCE_KEY]);
  const nestedChanged = isObject(ui) && nested !== ui.resourceUri;
  const legacyChanged = legacy !== meta[LEGACY_UI_RESOURCE_KEY];
  if (!nestedChanged && !legacyChanged) return tool;
  const out: Record<string, unknown> = { ...meta };
  if (nestedChanged) out[UI_META_KEY] = { ...ui, resourceUri: nested };
  if (legacyChanged) out[LEGACY_UI_RESOURCE_KEY] = legacy;
  return { ...tool, _meta: out };
}

export class ResourceUris {
  readonly #prefixes: ReadonlyMap<string, string>;

  constructor(upstreams: ReadonlyMap<string, { prefix: string; prefixUris?: boolean }>) {
    this.#prefixes = new Map(
      [...upstreams].filter(([, u]) => u.prefixUris === true).map(([name, u]) => [name, u.prefix]),
    );
  }

  /** undefined: the upstream's URIs are offered as they are. */
  prefixOf(upstream: string): string | undefined {
    return this.#prefixes.get(upstream);
  }

  /** A notifications/resources/updated as the client knows the URI. */
  notification(upstream: string, n: JsonRpcNotification): JsonRpcNotification {
    const prefix = this.#prefixes.get(upstream);
    if (prefix === undefined || n.method !== 'notifications/resources/updated' || typeof n.params?.uri !== 'string')
      return n;
    return { ...n, params: { ...n.params, uri: prefixedUri(prefix, n.params.uri) } };
  }

  /** A result's resource URIs (read contents, resource links and embedded resources) as the client knows them. */
  result(upstream: string, method: string, result: McpResult): McpResult {
    const prefix = this.#prefixes.get(upstream);
    if (prefix === undefined) return result;
    const out = (uri: unknown) => (typeof uri === 'string' ? prefixedUri(prefix, uri) : uri);
    if (method === 'resources/read' && Array.isArray(result.contents)) {
      return {
        ...result,
        contents: result.contents.map((c: unknown) => (isObject(c) ? { ...c, uri: out(c.uri) } : c)),
      };
    }
    if (method === 'tools/call' && Array.isArray(result.content))
      return { ...result, content: result.content.map((c: unknown) => contentItem(c, out)) };
    if (method === 'prompts/get' && Array.isArray(result.messages)) {
      return {
        ...result,
        messages: result.messages.map((m: unknown) =>
          isObject(m) ? { ...m, content: contentItem(m.content, out) } : m,
        ),
      };
    }
    return result;
  }
}

function contentItem(c: unknown, out: (uri: unknown) => unknown): unknown {
  if (!isObject(c)) return c;
  if (c.type === 'resource_link') return { ...c, uri: out(c.uri) };
  if (c.type === 'resource' && isObject(c.resource))
    return { ...c, resource: { ...c.resource, uri: out(c.resource.uri) } };
  return c;
}
