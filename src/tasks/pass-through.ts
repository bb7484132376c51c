// Tasks of an upstream that runs them itself (2025-11-25 `capabilities.tasks.requests.tools.call`,
// or the 2026-07-28 extension): the call goes to it with the client's opt-in, and the task id it
// returns leaves wrapped, so tasks/get, tasks/result, tasks/cancel and tasks/update find their way
// back to that upstream with its own id. No store: the wrapped id carries the route, signed and
// bound to its caller, so any replica reads it and nobody can forge one to another upstream or
// another principal's task.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { MessageSink, RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import { SignedTokens } from '../contracts/signed-token.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcNotification } from '../jsonrpc/messages.js';
import { META } from '../jsonrpc/meta-keys.js';
import type { Route } from './shapes.js';
import { principalBinding } from './binding.js';
import { admitTaskMethod, eraOf } from './eras.js';
import { withoutTaskSupport } from './shapes.js';
import type { TaskEngine } from './engine.js';
import type { UpstreamEntry } from '../upstream/group.js';

/** A wrapped id starts so; the gateway's own ids are plain base64url (no dot). */
const PREFIX = 'u.';
/** What a wrapped id is signed as: under the shared stateSecret, no requestState verifies as one. */
const PURPOSE = 'taskId/wrapped';
/** Notifications of a pass-through task are sent to its session for this long at most. */
const FOLLOW_MS = 24 * 3600_000;
const MAX_FOLLOWED = 10_000;

export interface WrappedTask {
  upstream: string;
  /** The upstream's own task id. */
  id: string;
}

export class TaskPassThrough {
  readonly #tokens: SignedTokens;
  /** The key of wrapped ids made before the signed-token helper; see `#unwrapOldFormat`. */
  readonly #oldFormatKey: Buffer | undefined;
  /** Tasks created here on a 2025 session: where their upstream's status notifications go. */
  readonly #followed = new Map<string, { wrapped: string; sink: MessageSink; until: number }>();

  constructor(
    private readonly upstreams: ReadonlyMap<string, UpstreamEntry>,
    /** Shared by the replicas (`stateless.stateSecret`), or a wrapped id is read only where it was made. */
    secret: string | undefined,
  ) {
    this.#tokens = new SignedTokens(secret ? secret : undefined);
    // Without a shared secret the key was this process's own, so no earlier id can verify here anyway.
    this.#oldFormatKey = secret ? Buffer.from(`tasks:${secret}`, 'utf8') : undefined;
  }

  /** Whether `upstream` runs tools as tasks itself, on the wire this client's calls take to it. */
  runs(ctx: RequestContext, upstream: string): boolean {
    const workers = this.upstreams.get(upstream)?.workers;
    const capabilities = workers?.info?.capabilities;
    if (!workers || !capabilities) return false;
    const speaksStateless = workers.speaksStateless === true;
    return eraOf(ctx).upstreamRuns(ctx, { speaksStateless, dualEra: workers.dualEra === true, capabilities });
  }

  /**
   * Whether this tools/call goes to its upstream as the upstream's own task (or its refusal):
   * the gateway runs no task for the tool (its own `upstreams[].tasks` win) and the upstream runs tasks.
   */
  takes(ctx: RequestContext, route: Route | undefined, engine: TaskEngine | undefined): route is Route {
    return route !== undefined && !engine?.supportOf(route) && this.runs(ctx, route.upstream);
  }

  /** tools/list entries: the gateway's task support, else the upstream's where it is passed through, else none. */
  decorate(
    ctx: RequestContext,
    tools: Array<Record<string, unknown>>,
    routeOf: (name: string) => Route | undefined,
    engine: TaskEngine | undefined,
  ): Array<Record<string, unknown>> {
    const keeps = (upstream: string) => this.runs(ctx, upstream);
    if (engine) return engine.decorate(ctx, tools, routeOf, keeps);
    return tools.map((tool) => {
      const route =
        isObject(tool.execution) && tool.execution.taskSupport !== undefined ? routeOf(String(tool.name)) : undefined;
      return !route || keeps(route.upstream) ? tool : withoutTaskSupport(tool);
    });
  }

  /** tasks/get, tasks/result, tasks/cancel, tasks/update of a wrapped id: to its upstream, with the upstream's id. */
  async handle(
    ctx: RequestContext,
    method: string,
    params: Record<string, unknown>,
    forward: (upstream: string, params: Record<string, unknown>) => Promise<McpResult>,
  ): Promise<McpResult> {
    admitTaskMethod(ctx, method);
    const wrapped = String(params.taskId);
    const task = this.unwrap(ctx, wrapped);
    // An upstream that no longer runs tasks (replaced by a reload, say) has none of these.
    if (!this.runs(ctx, task.upstream)) throw new GatewayError('TASK_NOT_FOUND');
    return this.answered(ctx, task, wrapped, await forward(task.upstream, { ...params, taskId: task.id }));
  }

  /** Whether any upstream runs tasks itself for this kind of client (the gateway then says it has tasks). */
  any(stateless: boolean): boolean {
    const ctx = { stateless, protocolVersion: '2025-11-25', scope: '' } as RequestContext;
    for (const name of this.upstreams.keys()) if (this.runs(ctx, name)) return true;
    return false;
  }

  wrap(ctx: RequestContext, upstream: string, id: string): string {
    return `${PREFIX}${this.#tokens.sign(PURPOSE, [upstream, id], { binding: binding(ctx) })}`;
  }

  static isWrapped(taskId: unknown): taskId is string {
    return typeof taskId === 'string' && taskId.startsWith(PREFIX);
  }

  /**
   * Whether a tasks/* request is one of these: a wrapped id; or, with no task engine, any id of
   * a client some upstream runs tasks for (an unknown one is then -32602, not "no such method").
   */
  owns(ctx: RequestContext, method: string, taskId: unknown, engine: TaskEngine | undefined): boolean {
    if (TaskPassThrough.isWrapped(taskId)) return true;
    return engine === undefined && method !== 'tasks/list' && this.any(ctx.stateless);
  }

  /** The upstream and its id; a wrapped id that is forged, altered or another caller's reads "not found". */
  unwrap(ctx: RequestContext, taskId: string): WrappedTask {
    const token = taskId.slice(PREFIX.length);
    const opened = this.#tokens.open(PURPOSE, token, binding(ctx));
    const parsed = opened && !opened.expired ? opened.payload : this.#unwrapOldFormat(ctx, token);
    const known = Array.isArray(parsed) && typeof parsed[0] === 'string' && typeof parsed[1] === 'string';
    if (!known || !this.upstreams.has(parsed[0])) throw new GatewayError('TASK_NOT_FOUND');
    return { upstream: parsed[0], id: parsed[1] };
  }

  /**
   * A wrapped id in the format before the signed-token helper (`<body>.<mac>`, HMAC under
   * `tasks:<secret>` over era, binding and body, no purpose): a task lives as long as its ttl, up
   * to a day, so ids handed out before a rolling upgrade must still resolve after it. To be
   * removed in the next release, with `#oldFormatKey`. Undefined when it is not one.
   */
  #unwrapOldFormat(ctx: RequestContext, token: string): unknown {
    const parts = token.split('.');
    const [body, mac] = parts;
    if (!this.#oldFormatKey || parts.length !== 2 || !body || mac === undefined) return undefined;
    const want = Buffer.from(
      createHmac('sha256', this.#oldFormatKey)
        .update(`${binding(ctx)}\u0000${body}`)
        .digest('base64url'),
    );
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  }

  /** A task-augmented call's answer from the upstream: its task id leaves wrapped. */
  created(ctx: RequestContext, upstream: string, result: McpResult): McpResult {
    if (isObject(result.task) && typeof result.task.taskId === 'string') {
      const wrapped = this.wrap(ctx, upstream, result.task.taskId);
      this.#follow(ctx, upstream, result.task.taskId, wrapped);
      return { ...result, task: { ...result.task, taskId: wrapped } };
    }
    if (result.resultType === 'task' && typeof result.taskId === 'string')
      return { ...result, taskId: this.wrap(ctx, upstream, result.taskId) };
    return result;
  }

  /** tasks/* answers from the upstream: ids as the client knows them. */
  answered(ctx: RequestContext, task: WrappedTask, wrapped: string, result: McpResult): McpResult {
    const out: McpResult = result.taskId === task.id ? { ...result, taskId: wrapped } : { ...result };
    const meta = isObject(result._meta) ? result._meta : undefined;
    const related = meta?.[META.relatedTask];
    if (meta && isObject(related) && related.taskId === task.id)
      out._meta = { ...meta, [META.relatedTask]: { ...related, taskId: wrapped } };
    if (out.status === 'completed' || out.status === 'failed' || out.status === 'cancelled')
      this.#followed.delete(followKey(task.upstream, task.id));
    return out;
  }

  #follow(ctx: RequestContext, upstream: string, id: string, wrapped: string): void {
    if (!eraOf(ctx).relaysStatus || !ctx.sessionSink) return;
    const now = Date.now();
    if (this.#followed.size >= MAX_FOLLOWED) {
      for (const [k, v] of this.#followed) if (v.until < now) this.#followed.delete(k);
      // Still full: the oldest goes (a Map iterates in insertion order).
      if (this.#followed.size >= MAX_FOLLOWED) this.#followed.delete(this.#followed.keys().next().value as string);
    }
    this.#followed.set(followKey(upstream, id), { wrapped, sink: ctx.sessionSink, until: now + FOLLOW_MS });
  }

  /**
   * An upstream's notifications/tasks/status from a shared worker: to the session that created
   * the task (on this replica), with the id it knows. True when it was one (it goes nowhere else).
   */
  notification(upstream: string, n: JsonRpcNotification): boolean {
    if (n.method !== 'notifications/tasks/status') return false;
    const followed = this.#followedBy(upstream, n);
    if (followed) followed.sink.send(this.rewrite(upstream, n));
    return true;
  }

  /** A per-session worker's notification as its client knows it: a task status names the wrapped id. */
  rewrite(upstream: string, n: JsonRpcNotification): JsonRpcNotification {
    const followed = n.method === 'notifications/tasks/status' ? this.#followedBy(upstream, n) : undefined;
    if (!followed) return n;
    const status = n.params?.status;
    if (status === 'completed' || status === 'failed' || status === 'cancelled')
      this.#followed.delete(followKey(upstream, String(n.params?.taskId)));
    return { ...n, params: { ...n.params, taskId: followed.wrapped } };
  }

  #followedBy(upstream: string, n: JsonRpcNotification): { wrapped: string; sink: MessageSink } | undefined {
    const id = n.params?.taskId;
    return typeof id === 'string' ? this.#followed.get(followKey(upstream, id)) : undefined;
  }
}

/** Whose a wrapped id is: the era it was made in (its old word) and its binding, signed with it. */
function binding(ctx: RequestContext): string {
  return `${eraOf(ctx).wrappedWord}\u0000${wrappedBinding(ctx)}`;
}

/** Who may use a wrapped id of an upstream's task (no store, nothing to bound): as eras.ts's mayRead sees ours. */
function wrappedBinding(ctx: RequestContext): string {
  return ctx.principal !== undefined ? principalBinding(ctx.principal) : eraOf(ctx).wrappedAnonymous(ctx);
}

function followKey(upstream: string, id: string): string {
  return `${upstream}\u0000${id}`;
}
