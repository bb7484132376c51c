import type { WebSocket } from '@fastify/websocket';
import { LARGE_TEXT_CHARS, TurnQueue } from '../timing/loop-turns.js';

/**
 * Writes text messages on a WebSocket. One over LARGE_TEXT_CHARS goes out fragmented (a text frame
 * without FIN, then continuation frames), one fragment per event-loop turn, as a large JSON reply or
 * SSE event is written (timing/loop-turns.ts); what is sent meanwhile waits behind it, in order.
 * Each fragment ends on a whole character, so each is valid UTF-8 on its own.
 */
export class WebSocketSender {
  readonly #queue = new TurnQueue((text) => this.send(text));

  constructor(private readonly socket: Pick<WebSocket, 'send' | 'readyState' | 'OPEN'>) {}

  send(text: string): void {
    if (this.socket.readyState !== this.socket.OPEN || this.#queue.holds(text)) return;
    if (text.length <= LARGE_TEXT_CHARS) {
      this.socket.send(text);
      return;
    }
    const socket = this.socket;
    this.#queue.writeLarge(text, {
      write: (fragment) => socket.send(fragment, { fin: false }),
      last: (fragment) => socket.send(fragment, { fin: true }),
      stopped: () => socket.readyState !== socket.OPEN,
    });
  }
}
