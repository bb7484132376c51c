/**
 * `toolSearch`, per endpoint (top level for the main path, and in each `servers[]` entry): for
 * catalogs too big to list, tools/list answers the pinned tools and the gateway's own
 * `search_tools` and `call_tool`. See docs/tool-search.md.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { TOOL_SEARCH_MAX_EXPOSED } from './limits.js';

export const toolSearchSchema = {
  type: 'object',
  additionalProperties: false,
  description: "Progressive discovery: list only pinned tools and the gateway's search_tools and call_tool.",
  properties: {
    enabled: {
      type: 'boolean',
      default: false,
      description: 'On: tools/list answers the pinned tools plus search_tools and call_tool. Off: no change at all.',
    },
    pinned: {
      type: 'array',
      items: { type: 'string', minLength: 1, maxLength: 512 },
      maxItems: 1000,
      default: [],
      description: 'Globs (*) over the tool names this endpoint exposes: always listed, whatever the search finds.',
    },
    maxResults: {
      type: 'integer',
      minimum: 1,
      maximum: 50,
      default: 10,
      description: "search_tools' most results, and the largest `limit` a caller may ask for (also its default).",
    },
    expose: {
      type: 'string',
      enum: ['none', 'list_changed'],
      default: 'none',
      description:
        "list_changed: the tools a 2025 session found (search_tools' results, call_tool's tool) join that " +
        "session's tools/list, the most recent exposeMax, and it hears notifications/tools/list_changed.",
    },
    exposeMax: {
      type: 'integer',
      minimum: 1,
      maximum: TOOL_SEARCH_MAX_EXPOSED,
      default: 20,
      description: 'With expose list_changed: how many found tools a session keeps listed (the most recent).',
    },
    description: {
      type: 'string',
      maxLength: 4096,
      description:
        "The operator's words, appended to search_tools' description (what the tools are for, when to search).",
    },
  },
  required: [],
} as const;

export type ToolSearchConfig = FromSchema<typeof toolSearchSchema>;
