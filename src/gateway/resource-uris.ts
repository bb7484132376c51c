// `upstreams[].resources: { uris: prefixed }`: an upstream's resource URIs as clients see them.
// The scheme is `<prefix>+<original URI>` (`docs+file:///a.md`, `a+demo://resource/{id}`): a
// literal in front, so a template stays a template and the original comes back by cutting the
// prefix off. Two copies of one server, each with its own prefix, then offer distinct URIs.
// Outward (results, notifications) URIs get the prefix here; inward, the catalog's routes hold
// the original of each URI a client names.
import { isObject, type JsonRpcNotification } from '../jsonrpc/messages.js';
import type { McpResult } from '../contracts/upstream.js';

export const URI_SEPARATOR = '+';

export function prefixedUri(prefix: string, uri: string): string {
  return `${prefix}${URI_SEPARATOR}${uri}`;
}

/** The prefixes of the upstreams whose URIs are prefixed, by upstream name. */
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
