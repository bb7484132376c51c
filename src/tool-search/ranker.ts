// What a tool search ranks and the one interface every ranking backend implements: BM25 here
// (bm25-ranker.ts); an embeddings backend (an OpenAI-compatible /embeddings URL) would be another
// RankerFactory, chosen where index-cache.ts is built. Backends see plain tool entries, never the
// catalog: what an endpoint selects and under which names is decided above them.

/** One tool as a search sees it: under the name the endpoint exposes. */
export interface SearchableTool {
  name: string;
  title: string;
  description: string;
  /** The inputSchema's top-level parameters. */
  params: ReadonlyArray<{ name: string; description: string }>;
  /** The upstream server it comes from. */
  upstream: string;
}

/** Where an index comes from: built here, or loaded as another process kept it (index-share.ts). */
export type IndexOrigin = 'built' | 'loaded';

/** One catalog version's tools, ranked. */
export interface ToolRanker {
  /** Absent: built. */
  readonly origin?: IndexOrigin;
  /** The names of the tools that match `query`, best first, at most `limit`. */
  search(query: string, limit: number): Promise<readonly string[]>;
}

/** Builds a ranker over one version of an endpoint's tools (may take its time: it runs off the request path). */
export type RankerFactory = (tools: readonly SearchableTool[]) => Promise<ToolRanker>;

/**
 * What of a tool's text is indexed. An upstream is not trusted: a 10 MB description would hold the
 * event loop for its whole split in one turn of an index build (the build yields between tools, not
 * within one). The real catalog's longest description is 2,781 characters, its most parameters 9.
 */
export const INDEXED = { descriptionChars: 8192, titleChars: 512, params: 128, paramChars: 2048 };

/** A tool entry (as tools/list has it) as a search sees it. */
export function searchable(entry: Record<string, unknown>, upstream: string): SearchableTool {
  const schema = entry.inputSchema;
  const properties = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
  return {
    name: String(entry.name),
    title: typeof entry.title === 'string' ? entry.title.slice(0, INDEXED.titleChars) : '',
    description: typeof entry.description === 'string' ? entry.description.slice(0, INDEXED.descriptionChars) : '',
    params: paramsOf(properties),
    upstream,
  };
}

/** The first parameters, without listing every one of a schema that has a million. */
function paramsOf(properties: Record<string, unknown>): SearchableTool['params'] {
  const params: Array<{ name: string; description: string }> = [];
  for (const name in properties) {
    if (params.length === INDEXED.params) break;
    if (!Object.hasOwn(properties, name)) continue;
    params.push({
      name: name.slice(0, INDEXED.paramChars),
      description: paramText(properties[name]).slice(0, INDEXED.paramChars),
    });
  }
  return params;
}

/** Enum values searched with the description: they name what a parameter sets ("closed" on an issue's state). */
const MAX_ENUM_VALUES = 16;
const MAX_ENUM_CHARS = 40;

/** A parameter's description, then its enum's string values (the first few, short ones only). */
function paramText(p: unknown): string {
  if (!isRecord(p)) return '';
  const description = typeof p.description === 'string' ? p.description : '';
  const values = Array.isArray(p.enum) ? p.enum : isRecord(p.items) && Array.isArray(p.items.enum) ? p.items.enum : [];
  const words = values
    .slice(0, MAX_ENUM_VALUES)
    .filter((v): v is string => typeof v === 'string' && v.length <= MAX_ENUM_CHARS);
  return [description, ...words].filter((w) => w !== '').join(' ');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
