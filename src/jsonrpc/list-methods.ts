// The one table of MCP's list methods: every file that asks "is this a list?" or "which list?"
// reads it, so a list the protocol adds is added here once.

/** The four lists an MCP server publishes, by the name the catalog keeps them under. */
export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** The method that lists each kind. */
export const LIST_METHOD: Readonly<Record<ListKind, string>> = {
  tools: 'tools/list',
  prompts: 'prompts/list',
  resources: 'resources/list',
  resourceTemplates: 'resources/templates/list',
};

// A Map, not an object literal: a method named "constructor" or "__proto__" must find nothing.
/** Each list method and the kind it lists. */
export const LIST_METHODS: ReadonlyMap<string, ListKind> = new Map(
  (Object.keys(LIST_METHOD) as ListKind[]).map((kind) => [LIST_METHOD[kind], kind]),
);
