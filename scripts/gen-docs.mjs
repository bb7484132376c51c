#!/usr/bin/env node
// Writes the two files generated from the config schema (src/config/schema.ts and the modules it
// composes, as built in dist/ by `npm run build`):
//   docs/configuration.md        every key: its type, default, description, and what a reload does
//   docs/mcp-gateway.schema.json the JSON Schema, for editors (yaml-language-server, VS Code)
// Descriptions come from the schema's own `description` strings: edit them there, not here.
//
//   npm run docs              (builds dist/ first, then writes both files)
//   npm run docs -- --check   (writes nothing; exits 1 naming each file that is stale)
//
// The rendering functions take the schema and its companions as arguments, so a test can run them
// over the TypeScript sources (test/docs/generated.test.ts) without a build.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The generated files, relative to the repository root. */
export const GENERATED = ['docs/configuration.md', 'docs/mcp-gateway.schema.json'];

/**
 * What the renderers need, from the config modules: the schema (schema.ts), the defaults that code
 * applies where ajv cannot (server.ts: inside `anyOf`), and which keys a reload applies (diff.ts).
 * @param {{ schema: any, server: any, diff: any }} modules
 */
export function inputsFrom({ schema, server, diff }) {
  const codeDefaults = {};
  for (const [k, v] of Object.entries(server.LEGACY_SSE_DEFAULTS)) codeDefaults[`legacySse.${k}`] = v;
  for (const [k, v] of Object.entries(server.WEBSOCKET_DEFAULTS)) codeDefaults[`websocket.${k}`] = v;
  return {
    schema: schema.configSchema,
    codeDefaults,
    liveSections: new Set(diff.LIVE_SECTIONS),
    liveLimits: new Set(diff.LIVE_LIMITS),
    policyKeys: new Set(diff.POLICY_KEYS),
  };
}

// --- rows: one per key, in schema order ------------------------------------------------------

/**
 * Every key under `node`, depth first: { path, node, required, top } where `top` is the key's
 * top-level section and `upstreamKey` its key inside an upstream entry (for what a reload does).
 */
function rows(node, path, top, required, out, upstreamKey) {
  if (path) out.push({ path, node, required, top, upstreamKey });
  const object = objectBranch(node);
  if (object?.properties) {
    for (const [key, sub] of Object.entries(object.properties)) {
      const child = path ? `${path}.${key}` : key;
      rows(
        sub,
        child,
        top ?? key,
        (object.required ?? []).includes(key),
        out,
        upstreamKey === null ? key : upstreamKey,
      );
    }
  }
  const map = node.additionalProperties;
  if (map && typeof map === 'object' && map.properties) rows(map, `${path}.<name>`, top, false, out, upstreamKey);
  if (node.type === 'array' && node.items?.properties && !node.items.oneOf) {
    for (const [key, sub] of Object.entries(node.items.properties)) {
      rows(sub, `${path}[].${key}`, top, (node.items.required ?? []).includes(key), out, upstreamKey);
    }
  }
  return out;
}

/** The object schema of a node that is an object, or `false | {…}` (legacySse, websocket). */
function objectBranch(node) {
  if (node.properties) return node;
  return node.anyOf?.find((b) => b.properties);
}

// --- cells -------------------------------------------------------------------------------------

/** Plain text for a table cell: no line breaks, pipes escaped, nothing taken for HTML or emphasis. */
function cellText(text) {
  return text
    .replace(/\s+/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/(^|[^A-Za-z0-9])([*_])|([*_])(?=[^A-Za-z0-9]|$)/g, (m, before, a, b) =>
      a ? `${before}\\${a}` : `\\${b}`,
    );
}

/** A value in a code span (pipes escaped: GFM tables split on them even there). */
function code(value) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `\`${text.replace(/\|/g, '\\|')}\``;
}

function bounds(node, min, max, unit = '') {
  const lo = node[min];
  const hi = node[max];
  if (lo !== undefined && hi !== undefined) return ` ${lo}–${hi}${unit}`;
  if (lo !== undefined) return ` ≥ ${lo}${unit}`;
  if (hi !== undefined) return ` ≤ ${hi}${unit}`;
  return '';
}

/** The type of a key as a reader needs it: kinds, bounds, allowed values. */
function typeOf(node) {
  if (node.anyOf) return node.anyOf.map(typeOf).join(' or ');
  if ('const' in node) return code(node.const);
  if (node.enum) return node.enum.map(code).join(', ');
  let text;
  switch (node.type) {
    case 'integer':
    case 'number':
      text = `${node.type}${bounds(node, 'minimum', 'maximum')}`;
      break;
    case 'string': {
      const parts = [];
      if (node.pattern) parts.push(`matching ${code(node.pattern)}`);
      const length = bounds(node, 'minLength', 'maxLength', ' chars');
      if (length) parts.push(length.trim());
      text = parts.length ? `string (${parts.join(', ')})` : 'string';
      break;
    }
    case 'array': {
      const count = bounds(node, 'minItems', 'maxItems', ' items').trim();
      const extra = [count, node.uniqueItems ? 'unique' : ''].filter(Boolean).join(', ');
      const items = node.items.properties ? 'objects' : typeOf(node.items);
      text = `array of ${items}${extra ? ` (${extra})` : ''}`;
      break;
    }
    case 'object':
      if (node.properties) text = 'object';
      else if (node.additionalProperties && typeof node.additionalProperties === 'object') {
        text = node.additionalProperties.properties ? 'map of objects' : `map of ${typeOf(node.additionalProperties)}`;
      } else text = 'object';
      break;
    default:
      text = String(node.type ?? 'any');
  }
  return node.nullable ? `${text} or \`null\`` : text;
}

function defaultOf(row, codeDefaults) {
  if ('default' in row.node) return code(row.node.default);
  if (row.path in codeDefaults) return code(codeDefaults[row.path]);
  return '';
}

/** What a reload does with a change of this key (config/diff.ts). */
function reloadOf(row, inputs) {
  if (row.top === 'upstreams') {
    if (row.upstreamKey === undefined || row.upstreamKey === null) return 'at once';
    return inputs.policyKeys.has(row.upstreamKey) ? 'at once' : 'new workers';
  }
  if (row.top === 'limits') {
    const key = row.path.split('.')[1];
    return key === undefined || inputs.liveLimits.has(key) ? 'at once' : 'restart';
  }
  return inputs.liveSections.has(row.top) ? 'at once' : 'restart';
}

// --- configuration.md --------------------------------------------------------------------------

const INTRO = `# Configuration reference

<!-- Generated by scripts/gen-docs.mjs from the config schema (src/config/*.ts): edit the
     descriptions there, then run \`npm run docs\`. CI fails when this file is stale. -->

The gateway reads one YAML or JSON file: \`--config <file>\`, else \`MCPGW_CONFIG\`. Without either it
runs its embedded default: in-memory sessions and the bundled example upstreams (\`examples/echo\`
and \`examples/slow\`). The file is validated at start-up: every problem is listed, naming its key,
and the process exits with code 2 before it binds a port. \`mcpgw --config <file> --check\`
validates without serving, upstreams included (see [deployment.md](deployment.md)).

For editors, the same schema as JSON Schema is [\`mcp-gateway.schema.json\`](mcp-gateway.schema.json).
With the YAML language server (VS Code's YAML extension, and others), a first line names it:

\`\`\`yaml
# yaml-language-server: $schema=../docs/mcp-gateway.schema.json
\`\`\`

(the path relative to the config file; the configs in \`examples/\` carry it).

- **\`\${NAME}\`** in a string value comes from the gateway's environment where the description says
  so (commands, arguments, child environments, URLs, headers, secrets, passwords): an unset
  variable is a config error, so secrets can stay out of the file.
- **Environment variables override the file**, before validation:

  | variable | overrides |
  |---|---|
  | \`MCPGW_CONFIG\` | the config file path (when \`--config\` is not given) |
  | \`MCPGW_HOST\` | \`listen.host\` |
  | \`MCPGW_PORT\` | \`listen.port\` |
  | \`MCPGW_LOG_LEVEL\` | \`logLevel\` |
  | \`MCPGW_REDIS_URL\` | \`sessions.redisUrl\` |

- **A key with no value** (\`prefix:\` alone in YAML, which is \`null\`) counts as not set where the
  type says \`null\` is allowed.
- **Reload** says what a reload (SIGHUP, or a change of the file) does with a changed key: \`at
  once\`; \`new workers\` (an upstream's workers are replaced: new calls go to new ones, calls in
  flight finish on the old ones); or \`restart\` (the running value stays, and the reload names the
  key in a warning). See [replicas-and-reload.md](replicas-and-reload.md) for the details, such as
  \`tasks\` keys, which apply at once only where the gateway started with a task engine.
`;

/** One table of keys. */
function table(list, inputs) {
  const lines = ['| key | type | default | reload | description |', '|---|---|---|---|---|'];
  for (const row of list) {
    const type = `${typeOf(row.node)}${row.required ? ', **required**' : ''}`;
    const description = row.node.description ? cellText(row.node.description) : '';
    lines.push(
      `| ${code(row.path)} | ${type} | ${defaultOf(row, inputs.codeDefaults)} | ${reloadOf(row, inputs)} | ${description} |`,
    );
  }
  return lines.join('\n');
}

/** An upstream's keys: those every transport has, then each transport's own. */
function upstreamSection(node, inputs) {
  const items = node.items;
  const branches = items.oneOf.map((branch) => {
    const list = rows(
      { ...branch, properties: { ...branch.properties } },
      'upstreams[]',
      'upstreams',
      false,
      [],
      null,
    ).slice(1);
    const transport = branch.properties.transport;
    return { label: [transport.const ?? transport.enum].flat(), list };
  });
  const key = (r) => JSON.stringify([r.path, r.node, r.required]);
  const common = branches[0].list.filter(
    (r) => r.path !== 'upstreams[].transport' && branches.every((b) => b.list.some((o) => key(o) === key(r))),
  );
  const commonKeys = new Set(common.map(key));
  const transport = {
    path: 'upstreams[].transport',
    node: items.properties.transport,
    required: true,
    top: 'upstreams',
    upstreamKey: 'transport',
  };
  const parts = ['#### Every transport', '', table([transport, ...common], inputs)];
  for (const b of branches) {
    const own = b.list.filter((r) => r.path !== 'upstreams[].transport' && !commonKeys.has(key(r)));
    parts.push('', `#### ${b.label.map((t) => code(`transport: ${t}`)).join(' or ')}`, '', table(own, inputs));
  }
  return parts.join('\n');
}

/** A key's kind in a word, for a YAML comment. */
function kindOf(node) {
  if (node.anyOf) return node.anyOf.map(kindOf).join(' or ');
  if ('const' in node) return JSON.stringify(node.const);
  if (node.enum) return node.enum.join(' | ');
  return `${node.type ?? 'any'}${node.nullable ? ' or null' : ''}`;
}

/**
 * The defaults as one YAML document. A key without a default is commented out, and so is a
 * section without one (its keys below it, commented too).
 */
function glance(schema, codeDefaults) {
  const out = [];
  const scalar = (v) => (typeof v === 'string' && /^[\w./:-]+$/.test(v) ? v : JSON.stringify(v));
  /** `off`: the indent of the commented-out section this key is in, or -1. */
  const line = (indent, off, text, comment = false) => {
    if (off < 0 && !comment) return `${' '.repeat(indent)}${text}`;
    const at = off < 0 ? indent : off;
    return `${' '.repeat(at)}# ${' '.repeat(indent - at)}${text}`;
  };
  const emit = (node, indent, path, off) => {
    const object = objectBranch(node);
    for (const [key, sub] of Object.entries(object.properties)) {
      const at = path ? `${path}.${key}` : key;
      const required = (object.required ?? []).includes(key) ? ', required' : '';
      if (key === 'upstreams' && !path) {
        out.push(line(indent, off, `${key}:`));
        for (const branch of sub.items.oneOf) {
          const t = branch.properties.transport;
          out.push(
            line(indent + 2, off, `- transport: ${t.const ?? `${t.enum[0]}  # or ${t.enum.slice(1).join(', ')}`}`),
          );
          const rest = Object.fromEntries(Object.entries(branch.properties).filter(([k]) => k !== 'transport'));
          emit({ properties: rest, required: branch.required }, indent + 4, 'upstreams[]', off);
        }
      } else if (objectBranch(sub) && sub.type !== 'array') {
        const commented = off >= 0 || !('default' in sub);
        out.push(line(indent, off, `${key}:`, commented));
        emit(sub, indent + 2, at, off >= 0 ? off : commented ? indent : -1);
      } else if ('default' in sub) out.push(line(indent, off, `${key}: ${scalar(sub.default)}`));
      else if (at in codeDefaults) out.push(line(indent, off, `${key}: ${scalar(codeDefaults[at])}`));
      else out.push(line(indent, off, `${key}: (${kindOf(sub)}${required})`, true));
    }
  };
  emit(schema, 0, '', -1);
  return out.join('\n');
}

/** @param {ReturnType<typeof inputsFrom>} inputs */
export function renderConfigurationMd(inputs) {
  const { schema } = inputs;
  const missing = rows(schema, '', undefined, false, [])
    .filter((r) => !r.node.description)
    .map((r) => r.path);
  const upstreamRows = schema.properties.upstreams.items.oneOf.flatMap((b) =>
    rows(b, 'upstreams[]', 'upstreams', false, []).slice(1),
  );
  missing.push(...upstreamRows.filter((r) => !r.node.description).map((r) => r.path));
  if (missing.length > 0)
    throw new Error(`config keys without a description in the schema: ${[...new Set(missing)].join(', ')}`);
  const parts = [
    INTRO,
    '## All keys at a glance',
    '',
    'Every default; keys without one are commented out.',
    '',
    '```yaml',
    glance(schema, inputs.codeDefaults),
    '```',
    '',
  ];
  parts.push('## Keys', '');
  for (const [key, node] of Object.entries(schema.properties)) {
    parts.push(`### \`${key}\``, '');
    if (key === 'upstreams') {
      parts.push(cellText(node.description).replace(/\\\|/g, '|'), '', upstreamSection(node, inputs), '');
      continue;
    }
    const list = rows(node, key, key, (schema.required ?? []).includes(key), []);
    if (list.length === 1) {
      // A key of its own (path, logLevel): its row says everything.
      parts.push(table(list, inputs), '');
      continue;
    }
    parts.push(cellText(node.description).replace(/\\\|/g, '|'), '');
    // The section's own row only where its type says more than "object" (legacySse: false or an object).
    const [own, ...keys] = list;
    parts.push(
      table(node.type === 'object' ? keys : [{ ...own, node: { ...own.node, description: '' } }, ...keys], inputs),
      '',
    );
  }
  return `${parts
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

// --- the JSON Schema for editors ---------------------------------------------------------------

/**
 * The schema as editors read it (draft-07): ajv's `nullable` spelt as a type list, no
 * `discriminator` (ajv's option, not a keyword of the draft), and the defaults that code applies
 * inside `anyOf` shown there as `default` (an annotation: editors offer it, nobody applies it).
 */
export function renderJsonSchema(inputs) {
  const convert = (node, path) => {
    if (Array.isArray(node)) return node.map((n) => convert(n, path));
    if (typeof node !== 'object' || node === null) return node;
    const out = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === 'discriminator' || k === 'nullable') continue;
      if (k === 'properties')
        out[k] = Object.fromEntries(
          Object.entries(v).map(([name, sub]) => [name, convert(sub, path ? `${path}.${name}` : name)]),
        );
      else if (k === 'items') out[k] = convert(v, `${path}[]`);
      else out[k] = convert(v, path);
    }
    if (node.nullable && typeof node.type === 'string') out.type = [node.type, 'null'];
    if (path in inputs.codeDefaults && !('default' in out)) out.default = inputs.codeDefaults[path];
    return out;
  };
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'mcp-gateway configuration',
    description: 'Generated by scripts/gen-docs.mjs from src/config/schema.ts; see docs/configuration.md.',
    ...convert(inputs.schema, ''),
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

// --- files -------------------------------------------------------------------------------------

/** Each generated file's path (relative to the root) and the text it should hold. */
export function generatedFiles(inputs) {
  return [
    { path: GENERATED[0], text: renderConfigurationMd(inputs) },
    { path: GENERATED[1], text: renderJsonSchema(inputs) },
  ];
}

/** The generated files under `root` whose content is not what the schema gives. */
export function staleFiles(inputs, root = ROOT) {
  return generatedFiles(inputs)
    .filter(({ path, text }) => {
      try {
        return readFileSync(join(root, path), 'utf8') !== text;
      } catch {
        return true;
      }
    })
    .map((f) => f.path);
}

async function main(argv) {
  const check = argv.includes('--check');
  const load = async (name) => {
    try {
      return await import(pathToFileURL(join(ROOT, 'dist/config', name)).href);
    } catch (err) {
      throw new Error(`cannot load dist/config/${name} (run npm run build first): ${err.message}`);
    }
  };
  const inputs = inputsFrom({
    schema: await load('schema.js'),
    server: await load('server.js'),
    diff: await load('diff.js'),
  });
  if (check) {
    const stale = staleFiles(inputs);
    for (const path of stale) process.stderr.write(`docs: ${path} is stale: run npm run docs\n`);
    process.stdout.write(`docs: ${GENERATED.length - stale.length} of ${GENERATED.length} generated file(s) fresh\n`);
    return stale.length === 0 ? 0 : 1;
  }
  for (const { path, text } of generatedFiles(inputs)) {
    writeFileSync(join(ROOT, path), text);
    process.stdout.write(`docs: wrote ${path}\n`);
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`docs: ${err.message}\n`);
      process.exitCode = 1;
    },
  );
}
