/**
 * A queue that takes turns between clients: `shift` gives the oldest item of the client whose
 * turn it is, then that client goes to the back. One client with a thousand calls waiting
 * holds up another client's one call by one turn, not by a thousand.
 */
export class FairQueue<T> {
  /** Each waiting client's items, oldest first; the map's order is the order of turns. */
  readonly #byClient = new Map<string, T[]>();
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(client: string, item: T): void {
    const items = this.#byClient.get(client);
    if (items) items.push(item);
    else this.#byClient.set(client, [item]);
    this.#length++;
  }

  shift(): T | undefined {
    const first = this.#byClient.entries().next();
    if (first.done) return undefined;
    const [client, items] = first.value;
    const item = items.shift();
    this.#byClient.delete(client);
    if (items.length > 0) this.#byClient.set(client, items);
    this.#length--;
    return item;
  }

  /** Takes `item` out wherever it waits (a call cancelled or timed out); false if it was not there. */
  remove(client: string, item: T): boolean {
    const items = this.#byClient.get(client);
    const i = items ? items.indexOf(item) : -1;
    if (!items || i === -1) return false;
    items.splice(i, 1);
    if (items.length === 0) this.#byClient.delete(client);
    this.#length--;
    return true;
  }

  /** Empties the queue; returns what waited, in turn order. */
  clear(): T[] {
    const all: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) all.push(item);
    return all;
  }
}
