/**
 * Clients that watch for list changes during a reload: the SDK client (2025 session, its GET
 * stream) and a raw 2026-07-28 `subscriptions/listen` stream.
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { MCP_HEADERS } from './gateway.js';
import { statelessRequest } from './stateless.js';
import { SseReader } from './sse.js';
import { until } from './wait.js';

const require = createRequire(import.meta.url);
export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** server-everything over stdio as an upstream, offering only `tools` (its own names). */
export function everything(
  name: string,
  tools: string[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [EVERYTHING, 'stdio'],
    tools: { allow: tools },
    ...extra,
  };
}

export interface WatchingClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The list_changed methods the session's GET stream delivered, in order. */
  changes: string[];
}

/** An SDK client with a session and its GET stream open (the gateway counts it before this resolves). */
export async function watchingClient(
  url: URL,
  options: { fetch?: typeof fetch; streamsOpen?: () => Promise<number> } = {},
): Promise<WatchingClient> {
  const client = new Client({ name: 'reload-test', version: '1.0.0' });
  const changes: string[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void changes.push(n.method));
  client.setNotificationHandler(PromptListChangedNotificationSchema, (n) => void changes.push(n.method));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, (n) => void changes.push(n.method));
  const before = await (options.streamsOpen ?? (() => getStreams(url)))();
  const transport = new StreamableHTTPClientTransport(url, options.fetch ? { fetch: options.fetch } : undefined);
  await client.connect(transport);
  // The SDK opens its GET stream after initialize, without telling: a reload before it would reach no stream.
  await until(
    'the GET stream to open',
    async () => (await (options.streamsOpen ?? (() => getStreams(url)))()) > before,
  );
  return { client, transport, changes };
}

/** mcpgw_sse_streams_open{kind="get"} of the gateway at `url`. */
export async function getStreams(url: URL): Promise<number> {
  const text = await (await fetch(new URL('/metrics', url))).text();
  const m = /^mcpgw_sse_streams_open\{kind="get"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * A 2026-07-28 listen stream for list changes (`notifications`: tool list changes unless given);
 * `acknowledged` is what its acknowledgement said it honours, `changes` fills as they arrive.
 */
export async function listenStream(
  url: URL,
  notifications: Record<string, unknown> = { toolsListChanged: true },
): Promise<{ acknowledged: Record<string, unknown>; changes: string[]; close(): Promise<void> }> {
  const { body, headers } = statelessRequest('listen-reload', 'subscriptions/listen', { notifications });
  const res = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`listen: HTTP ${res.status}: ${await res.text()}`);
  const reader = new SseReader(res);
  const ack = await reader.next();
  if (!ack?.data.includes('notifications/subscriptions/acknowledged'))
    throw new Error(`listen: no acknowledgement: ${ack?.data}`);
  const acknowledged = (JSON.parse(ack.data) as { params: { notifications: Record<string, unknown> } }).params
    .notifications;
  const changes: string[] = [];
  let open = true;
  void (async () => {
    while (open) {
      const ev = await reader.next(60_000).catch(() => undefined);
      if (!ev) return;
      if (ev.data) changes.push((JSON.parse(ev.data) as { method: string }).method);
    }
  })();
  return {
    acknowledged,
    changes,
    close: async () => {
      open = false;
      await reader.cancel();
    },
  };
}
