// The entities, actions and context a policy file is written against, as one table: the Cedar
// schema every file is validated with is generated from it (so a rule naming an attribute the
// gateway does not set is refused at load), and docs/policy.md lists the same names.

export const NAMESPACE = 'Gw';

/** Each action and the entity type it applies to. */
export const ACTIONS = {
  callTool: 'Tool',
  getPrompt: 'Prompt',
  readResource: 'Resource',
  list: 'Endpoint',
  task: 'Endpoint',
} as const;

export type PolicyAction = keyof typeof ACTIONS;
export type ResourceType = (typeof ACTIONS)[PolicyAction];

interface EntityShape {
  readonly attrs: Readonly<Record<string, string>>;
  /** Free-form keys (claims, arguments) as Cedar entity tags: read with hasTag/getTag, never unknown attributes. */
  readonly tags?: 'String';
}

export const ENTITIES: Readonly<Record<string, EntityShape>> = {
  // An authenticated caller: an API key's name or a token's subject; its claims are tags.
  Client: { attrs: { name: 'String', scopes: 'Set<String>', address: 'String' }, tags: 'String' },
  // No auth: one principal type, told apart by the TCP peer's address.
  Anonymous: { attrs: { address: 'String' } },
  // A call's arguments, each value a string (others as their JSON).
  Arguments: { attrs: {}, tags: 'String' },
  Tool: {
    attrs: {
      name: 'String',
      upstream: 'String',
      original: 'String',
      server: 'String',
      readOnlyHint: 'Bool',
      destructiveHint: 'Bool',
      idempotentHint: 'Bool',
      openWorldHint: 'Bool',
    },
  },
  Prompt: { attrs: { name: 'String', upstream: 'String', server: 'String' } },
  Resource: { attrs: { uri: 'String', upstream: 'String', server: 'String' } },
  Endpoint: { attrs: { server: 'String' } },
};

export const CONTEXT: Readonly<Record<string, string>> = {
  method: 'String',
  era: 'String',
  transport: 'String',
  hour: 'Long',
  weekday: 'Long',
  epoch: 'Long',
  arguments: 'Arguments',
};

export const PRINCIPALS = ['Client', 'Anonymous'] as const;

/** The Cedar schema (human-readable form) policies are validated against. */
export function cedarSchema(): string {
  const fields = (attrs: Readonly<Record<string, string>>) =>
    Object.entries(attrs)
      .map(([k, t]) => `${k}: ${t}`)
      .join(', ');
  const entities = Object.entries(ENTITIES).map(
    ([name, e]) => `  entity ${name} { ${fields(e.attrs)} }${e.tags ? ` tags ${e.tags}` : ''};`,
  );
  const actions = Object.entries(ACTIONS).map(
    ([name, resource]) =>
      `  action ${name} appliesTo { principal: [${PRINCIPALS.join(', ')}], resource: [${resource}], ` +
      `context: { ${fields(CONTEXT)} } };`,
  );
  return `namespace ${NAMESPACE} {\n${[...entities, ...actions].join('\n')}\n}\n`;
}
