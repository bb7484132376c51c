import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { MAX_MESSAGE_BYTES, type ResponseBody } from './response-body.js';
import { ExchangeFailure } from '../../contracts/exchange-failure.js';

export type SseEvent = EventSourceMessage;

/**
 * The JSON-RPC text an event carries, or undefined: events without data only prime a stream
 * for resumption, and events of other types than `message` are not MCP's.
 */
export function messageData(event: SseEvent): string | undefined {
  if (!event.data || (event.event !== undefined && event.event !== 'message')) return undefined;
  return event.data;
}

export interface SseReadOptions {
  onEvent(event: SseEvent): void;
  /** Each chunk, comments and keep-alives included: the stream is alive. */
  onActivity?(): void;
  /** The server's `retry:` field, the delay it asks for before a reconnection. */
  onRetry?(ms: number): void;
}

/**
 * Reads an SSE body until the server ends it. An event that would not fit in
 * MAX_MESSAGE_BYTES fails the read (garbage without line breaks must not grow without end); an
 * error thrown by `onEvent` stops the read and is rethrown, with the body destroyed.
 */
export async function readSse(body: ResponseBody, options: SseReadOptions): Promise<void> {
  let overflow = false;
  const parser = createParser({
    onEvent: (event) => options.onEvent(event),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    onError: (err) => {
      // Unknown fields and bad `retry:` values are ignored, as the SSE spec says.
      if (err.type === 'max-buffer-size-exceeded') overflow = true;
    },
    maxBufferSize: MAX_MESSAGE_BYTES,
  });
  const decoder = new TextDecoder();
  await body.each((chunk) => {
    options.onActivity?.();
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (overflow) throw new ExchangeFailure('protocol', `SSE event larger than ${MAX_MESSAGE_BYTES} bytes`);
  });
}
