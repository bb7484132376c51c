/** Reads a text/event-stream response event by event, with bounded waits. */

export interface SseEvent {
  id?: string;
  event?: string;
  retry?: number;
  data: string;
}

/** Parses one event block (comments ignored, multi-line data joined); undefined for a comment-only block. */
function parseBlock(block: string): SseEvent | undefined {
  const ev: SseEvent = { data: '' };
  const data: string[] = [];
  let fields = 0;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    fields++;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') ev.event = value;
    else if (field === 'id') ev.id = value;
    else if (field === 'retry') ev.retry = Number(value);
  }
  if (fields === 0) return undefined;
  ev.data = data.join('\n');
  return ev;
}

export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = '';
  #done = false;

  constructor(response: Response) {
    if (!response.body) throw new Error('response has no body');
    this.#reader = response.body.getReader();
  }

  /** The next event, or undefined when the stream ended; rejects after `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<SseEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.#buffer.indexOf('\n\n');
      if (end !== -1) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const ev = parseBlock(block);
        if (ev) return ev;
        continue;
      }
      if (this.#done) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE event within ${timeoutMs} ms`);
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        this.#reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no SSE event within ${timeoutMs} ms`)), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) this.#done = true;
      else this.#buffer += this.#decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n');
    }
  }

  /** Every event until the stream ends (bounded). */
  async rest(timeoutMs = 10_000): Promise<SseEvent[]> {
    const deadline = Date.now() + timeoutMs;
    const events: SseEvent[] = [];
    for (;;) {
      const ev = await this.next(Math.max(1, deadline - Date.now()));
      if (!ev) return events;
      events.push(ev);
    }
  }

  /** Drops the connection (as a client whose network went away). */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => undefined);
  }
}

/** The JSON-RPC messages of events that carry data (priming events carry none). */
export function messagesOf(events: SseEvent[]): any[] {
  return events.filter((e) => e.data !== '').map((e) => JSON.parse(e.data));
}

/** Every event of a whole text/event-stream body. */
export function parseSse(body: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of body.replace(/\r\n?/g, '\n').split('\n\n')) {
    const ev = parseBlock(block);
    if (ev) events.push(ev);
  }
  return events;
}

/** The next message on `reader` whose method is `method` (others are skipped), within `timeoutMs`. */
export async function nextNotification(
  reader: SseReader,
  method: string,
  timeoutMs = 5000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ev = await reader.next(Math.max(1, deadline - Date.now()));
    if (!ev) throw new Error(`the stream ended before ${method}`);
    const message = ev.data === '' ? undefined : (JSON.parse(ev.data) as Record<string, unknown>);
    if (message?.method === method) return message;
  }
}
