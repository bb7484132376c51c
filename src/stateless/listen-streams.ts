import type { MessageSink } from '../contracts/request-context.js';
import type { JsonRpcId } from '../jsonrpc/messages.js';
import { META } from '../jsonrpc/meta-keys.js';
import type { SseWriter } from '../streams/sse-writer.js';

/** The change notifications a `subscriptions/listen` request can ask for, by filter field. */
const LIST_CHANGES = {
  toolsListChanged: { method: 'notifications/tools/list_changed', capability: 'tools' },
  promptsListChanged: { method: 'notifications/prompts/list_changed', capability: 'prompts' },
  resourcesListChanged: { method: 'notifications/resources/list_changed', capability: 'resources' },
} as const;

type ListChange = keyof typeof LIST_CHANGES;

/** The part of a listen request's filter the gateway honours, as acknowledged to the client. */
export type Honoured = Partial<Record<ListChange, true>> & { resourceSubscriptions?: string[]; taskIds?: string[] };

/** The list changes of a listen filter the gateway honours: those of lists it has. */
export function honouredListChanges(requested: unknown, capabilities: Record<string, unknown>): Honoured {
  const honoured: Honoured = {};
  if (typeof requested !== 'object' || requested === null) return honoured;
  for (const field of Object.keys(LIST_CHANGES) as ListChange[]) {
    if (
      (requested as Record<string, unknown>)[field] === true &&
      capabilities[LIST_CHANGES[field].capability] !== undefined
    )
      honoured[field] = true;
  }
  return honoured;
}

interface Listener {
  sse: SseWriter;
  id: JsonRpcId;
  methods: ReadonlySet<string>;
}

/**
 * The `subscriptions/listen` streams of stateless (2026-07-28) clients on this replica: each a
 * POST's SSE reply that stays open, acknowledged first, then carrying the list changes it asked
 * for, tagged with the listen request's id. List changes reach every replica (each refreshes its
 * own catalog), so every replica serves its own listeners.
 */
export class ListenStreams {
  readonly #listeners = new Set<Listener>();
  readonly #timer: NodeJS.Timeout;

  constructor(keepAliveMs: number) {
    this.#timer = setInterval(() => {
      for (const l of this.#listeners) l.sse.comment('keep-alive');
    }, keepAliveMs);
    this.#timer.unref();
  }

  get size(): number {
    return this.#listeners.size;
  }

  /** Acknowledges `honoured` and keeps the stream; the sink tags what else it carries (resource updates). */
  open(sse: SseWriter, id: JsonRpcId, honoured: Honoured): MessageSink {
    const methods = new Set<string>();
    for (const field of Object.keys(LIST_CHANGES) as ListChange[])
      if (honoured[field]) methods.add(LIST_CHANGES[field].method);
    const listener: Listener = { sse, id, methods };
    sse.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [META.subscriptionId]: id }, notifications: honoured },
    });
    this.#listeners.add(listener);
    sse.onClose(() => this.#listeners.delete(listener));
    return {
      send: (message) => {
        if (!('method' in message) || 'id' in message) return false;
        const params = message.params ?? {};
        const meta = typeof params._meta === 'object' && params._meta !== null ? params._meta : {};
        return sse.send({ ...message, params: { ...params, _meta: { ...meta, [META.subscriptionId]: id } } });
      },
    };
  }

  /** A list of the virtual server changed: `method` is its list_changed notification. */
  broadcast(method: string): void {
    for (const l of this.#listeners) {
      if (l.methods.has(method))
        l.sse.send({ jsonrpc: '2.0', method, params: { _meta: { [META.subscriptionId]: l.id } } });
    }
  }

  /** Ends every stream the way the spec calls graceful: the listen request's result, then the end. */
  closeAll(): void {
    clearInterval(this.#timer);
    for (const l of [...this.#listeners]) {
      l.sse.send({
        jsonrpc: '2.0',
        id: l.id,
        result: { resultType: 'complete', _meta: { [META.subscriptionId]: l.id } },
      });
      l.sse.end();
    }
  }
}
