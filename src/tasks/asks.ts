// A 2025 task's call speaks to its client on the session's own stream (the reply stream of the
// tools/call is closed): a request it sends (elicitation, sampling) makes the task
// input_required until the client answers it, on this replica or on another, which says so
// over the bus (cluster/task-answers.ts).
import type { Logger } from 'pino';
import type { Bus } from '../cluster/bus.js';
import { publishTaskAnswer, subscribeTaskAnswers } from '../cluster/task-answers.js';
import { replicaOfClientAsk } from '../contracts/client-ask-id.js';
import type { MessageSink, RequestContext } from '../contracts/request-context.js';
import { isObject, type JsonRpcId, type JsonRpcMessage } from '../jsonrpc/messages.js';
import { META } from '../jsonrpc/meta-keys.js';
import type { TaskEvent } from './transitions.js';

/** Records a task's status change: its call asked its client, or the client answered (if the task still may). */
export type TaskMove = (taskId: string, event: TaskEvent, ctx: RequestContext) => Promise<void>;

/** A request a task's call sent its client: the task, and the context its call runs in. */
interface TaskAsk {
  taskId: string;
  ctx: RequestContext;
}

export class TaskAsks {
  /** Requests (by scope and id) to the task that sent them. */
  readonly #asked = new Map<string, TaskAsk>();
  /** Each task's status changes, one after another: an answer's never lands before its question's. */
  readonly #moving = new Map<string, Promise<void>>();
  #unsubscribe: (() => Promise<void>) | undefined;

  /** `bus`: where answers that reach other replicas are heard (none: one replica). */
  constructor(
    private readonly move: TaskMove,
    private readonly bus?: Bus,
  ) {}

  /** Hears the answers that reached other replicas. */
  async start(log: Logger): Promise<void> {
    if (!this.bus) return;
    this.#unsubscribe = await subscribeTaskAnswers(this.bus, log, (answer) => this.#answered(answer.scope, answer.id));
  }

  async stop(): Promise<void> {
    await this.#unsubscribe?.().catch(() => undefined);
  }

  /** The sink of a 2025 task's call: its requests carry the related task and are remembered. */
  sink(ctx: RequestContext, taskId: string): MessageSink {
    return {
      send: (message: JsonRpcMessage) => {
        let sent = message;
        if ('method' in message && 'id' in message) {
          const params = isObject(message.params) ? message.params : {};
          const meta = isObject(params._meta) ? params._meta : {};
          const related = { ...meta, [META.relatedTask]: { taskId } };
          sent = { ...message, params: { ...params, _meta: related } } as JsonRpcMessage;
          this.#asked.set(askKey(ctx.scope, message.id), { taskId, ctx });
          this.#move(taskId, { type: 'input-needed' }, ctx);
        }
        return ctx.sessionSink?.send(sent) ?? false;
      },
    };
  }

  /**
   * A client's answer, here: the task it was for goes on working. One this replica did not ask
   * for may be a task's on another replica (any request of the gateway's may be), which is told.
   */
  response(scope: string, id: JsonRpcId | null): void {
    if (id === null || this.#answered(scope, id)) return;
    const ours = typeof id === 'string' && replicaOfClientAsk(id) !== undefined;
    if (this.bus && ours) publishTaskAnswer(this.bus, scope, id);
  }

  /** A call that ended asks nothing more: its unanswered requests are not waited for. */
  forget(taskId: string): void {
    for (const [key, ask] of this.#asked) if (ask.taskId === taskId) this.#asked.delete(key);
  }

  #answered(scope: string, id: JsonRpcId): boolean {
    const key = askKey(scope, id);
    const ask = this.#asked.get(key);
    if (!ask) return false;
    this.#asked.delete(key);
    this.#move(ask.taskId, { type: 'input-answered' }, ask.ctx);
    return true;
  }

  #move(taskId: string, event: TaskEvent, ctx: RequestContext): void {
    // (A move logs its own failures: one that failed must not stop the next.)
    const before = this.#moving.get(taskId) ?? Promise.resolve();
    const moved = before.then(() => this.move(taskId, event, ctx)).catch(() => undefined);
    this.#moving.set(taskId, moved);
    void moved.finally(() => {
      if (this.#moving.get(taskId) === moved) this.#moving.delete(taskId);
    });
  }
}

function askKey(scope: string, id: JsonRpcId): string {
  return `${scope}\u0000${typeof id === 'number' ? `n${id}` : `s${id}`}`;
}
