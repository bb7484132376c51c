/** The `_meta` keys MCP 2026-07-28 reserves for per-request protocol fields and result identity. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  /** 2025-11-25 tasks: the task a message belongs to. */
  relatedTask: 'io.modelcontextprotocol/related-task',
} as const;

/** The 2026-07-28 tasks extension (SEP-2663), as clients and servers name it in `extensions`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * MCP Apps (ext-apps' EXTENSION_ID), and what the gateway declares of it to an upstream when it
 * speaks for no one client (a shared worker, a probe): that it relays `ui://` HTML apps. An app
 * server that offers its app tools only to a client declaring this (ext-apps' getUiCapability)
 * then offers them in the shared catalog; a host that renders no apps ignores a tool's `_meta.ui`
 * and uses its result as ever. A per-session worker gets its client's own declaration instead.
 */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** SEP-2640's skills extension: `skills/list`, `skills/get`, and `resources/directory/read` with `directoryRead`. */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
/** Its methods beside resources/read: the skills, and a skill directory's children. */
export const SKILLS_LIST = 'skills/list';
export const SKILLS_GET = 'skills/get';
export const DIRECTORY_READ = 'resources/directory/read';
export const UI_EXTENSION_SETTINGS: Readonly<Record<string, unknown>> = { mimeTypes: ['text/html;profile=mcp-app'] };

/** Keys under this prefix describe the client's request to us; an upstream of the 2025 era gets none of them. */
export const RESERVED_META_PREFIX = 'io.modelcontextprotocol/';

export const LOG_LEVELS: readonly string[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** Whether a client that asked for log messages at `min` and above wants one at `level` (none asked: no). */
export function wantsLog(min: string | undefined, level: unknown): boolean {
  if (min === undefined || typeof level !== 'string') return false;
  const at = LOG_LEVELS.indexOf(level);
  return at !== -1 && at >= LOG_LEVELS.indexOf(min);
}

/** Where a 2026-07-28 request's Mcp-Name value sits in its params, for the methods that carry one. */
export const MCP_NAME_PARAM: ReadonlyMap<string, string> = new Map([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
  // SEP-2663: a task's requests carry its id, so intermediaries can route by it.
  ['tasks/get', 'taskId'],
  ['tasks/update', 'taskId'],
  ['tasks/cancel', 'taskId'],
]);
