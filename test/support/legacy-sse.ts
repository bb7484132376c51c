/** A 2024-11-05 HTTP+SSE client by hand: the stream (GET /sse), its endpoint, and calls answered on it. */
import { SseReader } from './sse.js';

export interface LegacyStream {
  reader: SseReader;
  /** Where this session's POSTs go (the `endpoint` event). */
  endpoint: URL;
  sessionId: string;
  close(): void;
}

export const LEGACY_INIT = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
};

/** Opens a legacy stream; throws unless it answers 200 with an `endpoint` event first. */
export async function openLegacyStream(base: string): Promise<LegacyStream> {
  const controller = new AbortController();
  const res = await fetch(new URL('/sse', base), {
    headers: { accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (res.status !== 200) throw new Error(`GET /sse: ${res.status} ${await res.text()}`);
  const reader = new SseReader(res);
  const first = await reader.next();
  if (first?.event !== 'endpoint') throw new Error(`GET /sse: first event ${JSON.stringify(first)}`);
  const endpoint = new URL(first.data, base);
  return { reader, endpoint, sessionId: endpoint.searchParams.get('sessionId')!, close: () => controller.abort() };
}

/** POSTs one message to the session's endpoint; the gateway answers 202 (the reply goes on the stream). */
export async function postLegacy(endpoint: URL, message: object): Promise<number> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(message),
  });
  await res.text();
  return res.status;
}

/** The next JSON-RPC message on the stream with this id. */
export async function answerOn(
  reader: SseReader,
  id: string | number,
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ev = await reader.next(Math.max(1, deadline - Date.now()));
    if (!ev) throw new Error('the legacy stream ended');
    if (ev.event !== 'message') continue;
    const message = JSON.parse(ev.data) as Record<string, unknown>;
    if (message.id === id) return message;
  }
}

/** Initializes a legacy stream's session, calls echo with `text` and returns what it echoed. */
export async function legacyEcho(stream: LegacyStream, text: string): Promise<string> {
  await postLegacy(stream.endpoint, LEGACY_INIT);
  await answerOn(stream.reader, 'init');
  await postLegacy(stream.endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' });
  await postLegacy(stream.endpoint, {
    jsonrpc: '2.0',
    id: 'echo',
    method: 'tools/call',
    params: { name: 'echo__echo', arguments: { text } },
  });
  const answer = (await answerOn(stream.reader, 'echo')) as { result?: { content: Array<{ text: string }> } };
  return answer.result?.content[0]?.text ?? JSON.stringify(answer);
}
