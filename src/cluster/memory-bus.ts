import { randomUUID } from 'node:crypto';
import type { Bus } from './bus.js';

/** The bus of a single replica: delivery inside this process only. */
export class MemoryBus implements Bus {
  readonly replicaId = randomUUID();
  readonly #handlers = new Map<string, Set<(message: string) => void>>();

  async publish(channel: string, message: string): Promise<void> {
    const handlers = this.#handlers.get(channel);
    if (!handlers) return;
    // Asynchronous like a real bus, so callers never depend on re-entrant delivery.
    queueMicrotask(() => {
      for (const h of handlers) h(message);
    });
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    let set = this.#handlers.get(channel);
    if (!set) this.#handlers.set(channel, (set = new Set()));
    set.add(handler);
    return async () => {
      set.delete(handler);
      if (set.size === 0 && this.#handlers.get(channel) === set) this.#handlers.delete(channel);
    };
  }

  async close(): Promise<void> {
    this.#handlers.clear();
  }
}
