// The gateway's own two tools of tool search (config `toolSearch`): their definitions as
// tools/list shows them, the description that tells an agent what is behind the search, and the
// checks of their arguments. Answering them is tool-search-step.ts's.
import type { ToolSearchConfig } from '../config/schema.js';
import { TOOL_SEARCH_MAX_QUERY_CHARS } from '../config/limits.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';

export const SEARCH_TOOL = 'search_tools';
export const CALL_TOOL = 'call_tool';

type Entry = Record<string, unknown>;

/** How many upstream names the description spells out; more are counted. */
const NAMED_UPSTREAMS = 20;

/**
 * What is behind the search, in the words an agent reads before it decides to search: how many
 * tools, from which servers, and the operator's own text.
 */
export function searchDescription(tools: number, upstreams: readonly string[], config: ToolSearchConfig): string {
  const named = upstreams.slice(0, NAMED_UPSTREAMS).join(', ');
  const more = upstreams.length > NAMED_UPSTREAMS ? ` and ${upstreams.length - NAMED_UPSTREAMS} more` : '';
  const from =
    upstreams.length > 0 ? ` from ${upstreams.length === 1 ? 'the server' : 'the servers'} ${named}${more}` : '';
  const own = config.description ? ` ${config.description}` : '';
  return (
    `Searches the ${tools} tools of this endpoint${from}, most of which are not listed. Describe the task in ` +
    'plain words; the best matches come back with their names and input schemas. Run one with call_tool ' +
    `(or call it by its name). Search before concluding that no tool can do something.${own}`
  );
}

/** search_tools and call_tool as tools/list shows them. */
export function gatewayTools(description: string, config: ToolSearchConfig): Entry[] {
  const max = config.maxResults ?? 10;
  return [
    {
      name: SEARCH_TOOL,
      title: 'Search tools',
      description,
      inputSchema: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            minLength: 1,
            maxLength: TOOL_SEARCH_MAX_QUERY_CHARS,
            description: 'What you want to do, in plain words (e.g. "open an issue in a GitHub repository").',
          },
          limit: { type: 'integer', minimum: 1, maximum: max, description: `How many tools at most (default ${max}).` },
        },
        required: ['query'],
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    {
      name: CALL_TOOL,
      title: 'Call a tool',
      description:
        "Calls a tool that search_tools found, by its name, with its arguments as that tool's inputSchema says. " +
        "The result is that tool's own.",
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, description: "The tool's name, as search_tools gave it." },
          arguments: { type: 'object', description: "The tool's arguments." },
        },
        required: ['name'],
      },
    },
  ];
}

export interface SearchArguments {
  query: string;
  limit: number;
}

// C0 and C1 controls and DEL: a query is words, and a control character is binary or an injection.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** search_tools' arguments, checked: anything else is INVALID_PARAMS. */
export function searchArguments(args: unknown, config: ToolSearchConfig): SearchArguments {
  const max = config.maxResults ?? 10;
  if (!isObject(args)) throw invalid('search_tools needs arguments { query, limit? }');
  const { query, limit } = args;
  if (typeof query !== 'string' || query.trim().length === 0) throw invalid('query must be a non-empty string');
  if (query.length > TOOL_SEARCH_MAX_QUERY_CHARS)
    throw invalid(`query is longer than ${TOOL_SEARCH_MAX_QUERY_CHARS} characters`);
  if (CONTROL.test(query)) throw invalid('query may not hold control characters');
  if (limit !== undefined && !(Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= max))
    throw invalid(`limit must be an integer from 1 to ${max}`);
  return { query, limit: (limit as number | undefined) ?? max };
}

/** call_tool's arguments, checked: the tool it names and that tool's arguments. */
export function callArguments(args: unknown): { name: string; arguments: Entry | undefined } {
  if (!isObject(args)) throw invalid('call_tool needs arguments { name, arguments? }');
  const { name, arguments: inner } = args;
  if (typeof name !== 'string' || name.length === 0) throw invalid('name must be a non-empty string');
  if (name === SEARCH_TOOL || name === CALL_TOOL)
    throw invalid(`call_tool calls this endpoint's tools, not the gateway's own ${name}`);
  if (inner !== undefined && !isObject(inner)) throw invalid('arguments must be an object');
  return { name, arguments: inner };
}

function invalid(message: string): GatewayError {
  return new GatewayError('INVALID_PARAMS', message);
}
