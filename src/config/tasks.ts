/**
 * Tasks (long tool calls that outlive their connection): which tools of an upstream support
 * them (`upstreams[].tasks`), and the gateway's limits on them (the top-level `tasks:` key).
 */
import type { FromSchema } from 'json-schema-to-ts';
import { globPattern } from './tool-filter.js';

/** `upstreams[].tasks`: by the upstream's own tool names, `*` matching any run of characters. */
export const upstreamTasksSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    "Tools the gateway runs as tasks for its clients, whatever the upstream knows of tasks (by the upstream's own " +
    'tool names, * globs): see docs/tasks.md.',
  properties: {
    tools: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'Listed with execution.taskSupport "optional": a task when the client asks for one.',
    },
    requiredTools: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'Listed with execution.taskSupport "required": a call that is no task is refused.',
    },
  },
  required: [],
} as const;

export type UpstreamTasksConfig = FromSchema<typeof upstreamTasksSchema>;

export const tasksSchema = {
  type: 'object',
  additionalProperties: false,
  description: "The gateway's tasks (used only when some upstream has tasks:): see docs/tasks.md.",
  properties: {
    maxPerPrincipal: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000,
      default: 1000,
      description:
        'Live tasks (any status, until their ttl) one principal may hold (without auth: per 2025 session, per ' +
        '2026-07-28 client address); past it TASK_LIMIT (-32017).',
    },
    // 16 bodies at limits.bodyBytes' default: enough for large results, and a principal that
    // piles them up for a day costs 64 MiB, not the heap.
    maxBytesPerPrincipal: {
      type: 'integer',
      minimum: 1024,
      maximum: 1099511627776,
      default: 67108864,
      description:
        "Bytes their records may hold together (results, errors, a 2026 task's questions and answers; arguments " +
        'are not kept), in memory or Redis; past it TASK_LIMIT, or the task fails with it.',
    },
    defaultTtlMs: {
      type: 'integer',
      minimum: 1000,
      maximum: 604800000,
      default: 3600000,
      description:
        'A task is kept this long from its creation (2026-07-28 always; 2025 when the client asks for no ttl).',
    },
    maxTtlMs: {
      type: 'integer',
      minimum: 1000,
      maximum: 604800000,
      default: 86400000,
      description: "The longest a task is kept: a 2025 client's task.ttl is capped here (and raised to at least 1 s).",
    },
    pollIntervalMs: {
      type: 'integer',
      minimum: 100,
      maximum: 600000,
      default: 1000,
      description: 'What clients are told to wait between polls.',
    },
    inputWindowMs: {
      type: 'integer',
      minimum: 0,
      maximum: 60000,
      default: 1000,
      description:
        '2026-07-28, requiredTools: input the call asks for within this long goes back as input_required rounds; ' +
        "after it (or once the call ended) the call is a task (SEP-2663's MRTR-then-task).",
    },
  },
  required: [],
  default: {},
} as const;

export type TasksConfig = FromSchema<typeof tasksSchema>;

export type TaskSupport = 'optional' | 'required';

/** A tool's task support by its upstream's own name: none (undefined), optional or required. */
export function taskSupportOf(rules: UpstreamTasksConfig | undefined): (tool: string) => TaskSupport | undefined {
  if (!rules) return () => undefined;
  const required = (rules.requiredTools ?? []).map(globPattern);
  const optional = (rules.tools ?? []).map(globPattern);
  return (tool) =>
    required.some((p) => p.test(tool)) ? 'required' : optional.some((p) => p.test(tool)) ? 'optional' : undefined;
}

export function tasksChecks(tasks: TasksConfig, problems: string[]): void {
  if (tasks.defaultTtlMs > tasks.maxTtlMs)
    problems.push(`tasks.defaultTtlMs: must be <= tasks.maxTtlMs (${tasks.maxTtlMs})`);
}

/**
 * The task settings a running gateway reads per call, changed in place by a config reload:
 * `tasks:` (limits, ttls, poll interval) and each upstream's `upstreams[].tasks` globs.
 */
export class LiveTaskSettings {
  readonly limits: TasksConfig;
  readonly #support = new Map<string, (tool: string) => TaskSupport | undefined>();
  readonly #rules = new Map<string, UpstreamTasksConfig | undefined>();

  constructor(tasks: TasksConfig, upstreams: ReadonlyArray<{ name: string; tasks?: UpstreamTasksConfig | undefined }>) {
    this.limits = { ...tasks };
    this.apply(tasks, upstreams);
  }

  support(upstream: string, tool: string): TaskSupport | undefined {
    return this.#support.get(upstream)?.(tool);
  }

  /** Takes a reload's settings; true when some upstream's task tools changed (tools/list shows them). */
  apply(
    tasks: TasksConfig,
    upstreams: ReadonlyArray<{ name: string; tasks?: UpstreamTasksConfig | undefined }>,
  ): boolean {
    Object.assign(this.limits, tasks);
    let changed = upstreams.length !== this.#rules.size;
    const rules = new Map(upstreams.map((u) => [u.name, u.tasks]));
    for (const [name, r] of rules) if (JSON.stringify(r) !== JSON.stringify(this.#rules.get(name))) changed = true;
    this.#rules.clear();
    this.#support.clear();
    for (const [name, r] of rules) {
      this.#rules.set(name, r);
      this.#support.set(name, taskSupportOf(r));
    }
    return changed;
  }
}

/** Whether any upstream names task tools (the gateway then runs a task engine, from its start). */
export function namesTaskTools(upstreams: ReadonlyArray<{ tasks?: UpstreamTasksConfig | undefined }>): boolean {
  return upstreams.some(
    (u) => u.tasks !== undefined && ((u.tasks.tools?.length ?? 0) > 0 || (u.tasks.requiredTools?.length ?? 0) > 0),
  );
}
