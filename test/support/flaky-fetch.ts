/**
 * A fetch for the SDK client that loses its connection like a real network would: the SSE reply
 * of a POST is cut after a number of progress events, and the client's resuming GET (it carries
 * Last-Event-ID) can be held back for a while and sent to another gateway (a load balancer
 * without affinity). Records what each resuming GET carried.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface Resumption {
  lastEventId: string;
  url: string;
  /** The SSE text of the resumed reply, as the client received it. */
  body: string;
}

export interface FlakyFetchOptions {
  /** Cut a POST's SSE reply after this many progress events. */
  cutAfterProgress: number;
  /** Where resuming GETs go (default: where the client sent them). */
  resumeAt?: URL;
  /** How long a resuming GET is held back: events produced meanwhile are missed, then replayed. */
  resumeDelayMs?: number;
}

export interface FlakyFetch {
  fetch: typeof fetch;
  resumptions: Resumption[];
  cuts: number;
}

const encoder = new TextEncoder();

export function flakyFetch(options: FlakyFetchOptions): FlakyFetch {
  const state: FlakyFetch = { fetch: undefined as unknown as typeof fetch, resumptions: [], cuts: 0 };
  let cutDone = false;

  state.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const headers = new Headers(init?.headers);
    const lastEventId = headers.get('last-event-id');
    if (method === 'GET' && lastEventId) {
      if (options.resumeDelayMs) await new Promise((r) => setTimeout(r, options.resumeDelayMs));
      const url = options.resumeAt ?? new URL(String(input instanceof Request ? input.url : input));
      const res = await fetch(url, init);
      const record: Resumption = { lastEventId, url: url.href, body: '' };
      state.resumptions.push(record);
      return tap(res, (text) => (record.body += text));
    }
    const res = await fetch(input, init);
    const isSse = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
    if (method !== 'POST' || !isSse || cutDone || !res.body) return res;
    cutDone = true;
    return new Response(
      cut(res.body, options.cutAfterProgress, () => state.cuts++),
      { status: res.status, headers: res.headers },
    );
  }) as typeof fetch;
  return state;
}

/** Passes whole events through; after the nth progress event, the connection drops. */
function cut(body: ReadableStream<Uint8Array>, progressEvents: number, onCut: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let seen = 0;
  let dropping = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (dropping) {
        // A moment for the client to take in what it got, then the network goes away.
        await new Promise((r) => setTimeout(r, 50));
        await reader.cancel();
        onCut();
        controller.error(new TypeError('network connection lost'));
        return;
      }
      const { value, done } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      text += decoder.decode(value, { stream: true });
      for (let end = text.indexOf('\n\n'); end !== -1 && !dropping; end = text.indexOf('\n\n')) {
        const block = text.slice(0, end + 2);
        text = text.slice(end + 2);
        controller.enqueue(encoder.encode(block));
        if (block.includes('notifications/progress') && ++seen >= progressEvents) dropping = true;
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

function tap(res: Response, onText: (text: string) => void): Response {
  if (!res.body) return res;
  const decoder = new TextDecoder();
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        onText(decoder.decode(chunk, { stream: true }));
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: res.status, headers: res.headers });
}

/**
 * The SDK client (`name`) on `url` through `flaky`, reconnecting fast, calls the slow example's
 * `slow__sleep` (1.5 s, 6 progress steps): the text of its result and the progress it heard, in
 * order. Its session is ended after.
 */
export async function sleepThroughFlakyFetch(
  url: URL,
  flaky: FlakyFetch,
  name: string,
): Promise<{ text: string; progress: number[] }> {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: flaky.fetch,
    reconnectionOptions: {
      initialReconnectionDelay: 50,
      maxReconnectionDelay: 500,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: 3,
    },
  });
  await client.connect(transport);
  try {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'slow__sleep', arguments: { ms: 1500, steps: 6 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
      timeout: 15_000,
    });
    const content = (result as { content?: Array<{ text?: string }> }).content ?? [];
    return { text: content.map((c) => c.text ?? '').join(''), progress };
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  }
}
