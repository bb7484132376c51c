// A 2025 task's call speaks to its client on the session's own stream (the reply stream of the
// tools/call is closed): a request it sends (elicitation, sampling) makes the task
// input_required until the client answers it on this replica.
import type { MessageSink, RequestContext } from '../contracts/request-context.js';
import { isObject, type JsonRpcId, type JsonRpcMessage } from '../jsonrpc/messages.js';
import { META } from '../jsonrpc/meta-keys.js';

export class TaskAsks {
  /** Requests (by scope and id) to the task that sent them. */
  readonly #asked = new Map<string, string>();

  /** `asking`: a task's call sent its client a request (the task becomes input_required). */
  constructor(private readonly asking: (taskId: string, ctx: RequestContext) => void) {}

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
          this.#asked.set(askKey(ctx.scope, message.id), taskId);
          this.asking(taskId, ctx);
        }
        return ctx.sessionSink?.send(sent) ?? false;
      },
    };
  }

  /** A client's answer: the task it was for, if it was one's (it goes on working). */
  answered(ctx: RequestContext, id: JsonRpcId | null): string | undefined {
    if (id === null) return undefined;
    const key = askKey(ctx.scope, id);
    const taskId = this.#asked.get(key);
    this.#asked.delete(key);
    return taskId;
  }

  /** A call that ended asks nothing more: its unanswered requests are not waited for. */
  forget(taskId: string): void {
    for (const [key, id] of this.#asked) if (id === taskId) this.#asked.delete(key);
  }
}

function askKey(scope: string, id: JsonRpcId): string {
  return `${scope}\u0000${typeof id === 'number' ? `n${id}` : `s${id}`}`;
}
