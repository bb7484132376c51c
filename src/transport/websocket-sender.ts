import type { WebSocket } from '@fastify/websocket';
import { LARGE_TEXT_CHARS, writeAcrossTurns } from '../timing/loop-turns.js';

/**
 * Writes text messages on a WebSocket. One over LARGE_TEXT_CHARS goes out fragmented (a text frame
 * without FIN, then continuation frames), one fragment per event-loop turn, as a large JSON reply or
 * SSE event is written (timing/loop-turns.ts); what is sent meanwhile waits behind it, in order.
 * Each fragment ends on a whole character, so each is valid UTF-8 on its own.
 */
export class WebSocketSender {
  #waiting: string[] | undefined;

  constructor(private readonly socket: Pick<WebSocket, 'send' | 'readyState' | 'OPEN'>) {}

  send(text: string): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    if (this.#waiting) {
      this.#waiting.push(text);
      return;
    }
    if (text.length <= LARGE_TEXT_CHARS) {
      this.socket.send(text);
      return;
    }
    this.#waiting = [];
    const socket = this.socket;
    writeAcrossTurns(
      text,
      {
        write: (fragment) => socket.send(fragment, { fin: false }),
        last: (fragment) => socket.send(fragment, { fin: true }),
        stopped: () => socket.readyState !== socket.OPEN,
      },
      () => this.#afterLarge(),
    );
  }

  /** The large message is out (or the socket closed): what waited behind it goes now. */
  #afterLarge(): void {
    const waiting = this.#waiting ?? [];
    this.#waiting = undefined;
    for (let i = 0; i < waiting.length; i++) {
      this.send(waiting[i]!);
      if (this.#waiting) {
        // Another large message: the rest waits behind it in turn.
        (this.#waiting as string[]).push(...waiting.slice(i + 1));
        return;
      }
    }
  }
}
