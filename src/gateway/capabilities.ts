// What the virtual server says about itself: the capabilities merged from its upstreams, their
// instructions, and the initialize and server/discover results built from them.
import { isObject } from '../jsonrpc/messages.js';
import { SKILLS_EXTENSION, TASKS_EXTENSION } from '../jsonrpc/meta-keys.js';
import { STATELESS_VERSIONS, negotiateVersion } from '../jsonrpc/versions.js';
import type { McpResult, UpstreamServerInfo } from '../contracts/upstream.js';
import { offersSubscriptions, upstreamInfo, type UpstreamEntry } from './upstream-entry.js';

export class Capabilities {
  constructor(
    private readonly upstreams: ReadonlyMap<string, UpstreamEntry>,
    private readonly serverInfo: { name: string; version: string },
    /** The gateway runs tools as tasks (some upstream has `tasks:`). */
    private readonly tasks = false,
    /** Whether some upstream runs tasks itself for such clients (they are passed through). */
    private readonly upstreamTasks: (stateless: boolean) => boolean = () => false,
  ) {}

  initialize(params: Record<string, unknown> | undefined): { protocolVersion: string; result: McpResult } {
    const protocolVersion = negotiateVersion(params?.protocolVersion);
    return {
      protocolVersion,
      result: this.#withInstructions({
        protocolVersion,
        capabilities: this.merged(false),
        serverInfo: this.serverInfo,
      }),
    };
  }

  /** What a 2026-07-28 client learns instead of initializing. */
  discover(): McpResult {
    return this.#withInstructions({ supportedVersions: [...STATELESS_VERSIONS], capabilities: this.merged(true) });
  }

  /** What the virtual server offers; `stateless`: to 2026-07-28 clients. */
  merged(stateless: boolean): Record<string, unknown> {
    // The three lists always, empty while no upstream has one: the gateway refreshes its catalog
    // when an upstream's lists change and tells clients, but a client hears list_changed only for
    // a capability it was given, and a session's cannot grow after initialize. So the first
    // upstream with prompts (or resources) that a reload adds, or that was down at start-up,
    // reaches the sessions opened before it.
    const resources: Record<string, unknown> = { listChanged: true };
    const capabilities: Record<string, unknown> = {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources,
    };
    const extensions = new Map<string, unknown>();
    for (const [name, info] of this.#upstreamInfos()) {
      addExtensions(extensions, info.capabilities.extensions);
      // Stateless clients subscribe on a listen stream (see watchResources).
      if (isObject(info.capabilities.resources) && offersSubscriptions(info)) resources.subscribe = true;
      if (info.capabilities.completions !== undefined) capabilities.completions = {};
      // Stateless requests get log messages of 2026-07-28 upstreams only (a 2025 worker's belong to its session).
      const logsReach = !stateless || this.upstreams.get(name)?.workers.speaksStateless === true;
      if (info.capabilities.logging !== undefined && logsReach) capabilities.logging = {};
    }
    // 2025-11-25 names what may be a task; 2026-07-28 has the extension instead (and never `tasks`).
    // tasks/list lists the gateway's own tasks only (tasks/pass-through.ts): without any, none is offered.
    if (stateless) {
      if (this.tasks || this.upstreamTasks(true)) extensions.set(TASKS_EXTENSION, {});
    } else if (this.tasks) capabilities.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
    else if (this.upstreamTasks(false)) capabilities.tasks = { cancel: {}, requests: { tools: { call: {} } } };
    if (extensions.size > 0) capabilities.extensions = Object.fromEntries(extensions);
    return capabilities;
  }

  /** The upstreams' instructions, each under its upstream's name. */
  #withInstructions(result: McpResult): McpResult {
    const parts: string[] = [];
    for (const [name, info] of this.#upstreamInfos())
      if (info.instructions) parts.push(`[${name}] ${info.instructions}`);
    if (parts.length > 0) result.instructions = parts.join('\n\n');
    return result;
  }

  /** Upstreams that are up, with what they said at initialize. */
  *#upstreamInfos(): Generator<[string, UpstreamServerInfo]> {
    for (const [name, entry] of this.upstreams) {
      const info = upstreamInfo(entry);
      if (info) yield [name, info];
    }
  }
}

/**
 * An upstream's declared extensions (`capabilities.extensions`, e.g. MCP Apps' `io.modelcontextprotocol/ui`), added
 * to the virtual server's: what the gateway passes through unchanged is the upstream's to declare. The first upstream
 * (in config order) to declare one gives its settings. The tasks extension is not: the gateway decides it (above),
 * since it answers tasks itself or passes them through by its own rules.
 */
function addExtensions(into: Map<string, unknown>, declared: unknown): void {
  if (!isObject(declared)) return;
  for (const [id, settings] of Object.entries(declared)) {
    // Skills: directoryRead when any upstream serves it (gateway/skills.ts refuses it for the others).
    const kept = into.get(id);
    if (id === SKILLS_EXTENSION && isObject(kept) && isObject(settings) && settings.directoryRead === true)
      into.set(id, { ...kept, directoryRead: true });
    if (id !== TASKS_EXTENSION && kept === undefined && isObject(settings)) into.set(id, settings);
  }
}
