/**
 * A 2026-07-28-only upstream on loopback, in this process, whose results carry the caching hints
 * (SEP-2549's `ttlMs`, `cacheScope`) a test sets per method, and which counts every request it
 * gets: what the result cache lets through is what it counts. Its resources/read answers with its
 * read count, so a result served to the wrong caller shows. `notify` sends a notification on its
 * listen streams (list_changed, resources/updated). With `session` it is a 2025 server whose
 * results carry the same hints (which 2025 does not have: the gateway must not act on them).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Hints {
  ttlMs?: unknown;
  cacheScope?: unknown;
}

export interface HintedUpstream {
  url: string;
  /** Hints per method (a test changes them as it goes); a method not named answers none. */
  hints: Record<string, Hints>;
  /** How many requests of `method` it got. */
  count(method: string): number;
  /** The text of every resource it serves gets this many characters of padding (a large result). */
  padding: number;
  notify(method: string, params?: Record<string, unknown>): void;
  /** Resolves once the gateway's listen stream is open. */
  listening(): Promise<void>;
  close(): Promise<void>;
}

/** What it lists, as hint://<name>. */
export const RESOURCES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'noscope', 'bad-0', 'bad-1', 'bad-2', 'bad-3'];

/** `session`: it speaks 2025-06-18 instead (initialize, a session id), its results still carrying the hints. */
export async function startHintedUpstream(options: { session?: boolean } = {}): Promise<HintedUpstream> {
  const counts = new Map<string, number>();
  const listeners = new Set<ServerResponse>();
  let opened: () => void = () => undefined;
  const open = new Promise<void>((r) => (opened = r));
  const upstream: HintedUpstream = {
    url: '',
    hints: {},
    padding: 0,
    count: (method) => counts.get(method) ?? 0,
    notify(method, params = {}) {
      for (const res of listeners)
        res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method, params })}\n\n`);
    },
    listening: () => open,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const results: Record<string, (params: Record<string, unknown>) => Record<string, unknown>> = {
    'server/discover': () => ({
      supportedVersions: ['2026-07-28'],
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
      },
      serverInfo: { name: 'hinted', version: '1' },
    }),
    'tools/list': () => ({ tools: [{ name: 'hinted_tool', inputSchema: { type: 'object' } }] }),
    'prompts/list': () => ({ prompts: [{ name: 'hinted_prompt' }] }),
    'resources/list': () => ({ resources: RESOURCES.map((name) => ({ uri: `hint://${name}`, name })) }),
    'resources/templates/list': () => ({ resourceTemplates: [] }),
    'resources/read': (params) => ({
      contents: [
        {
          uri: params.uri,
          text: `read ${counts.get('resources/read')} of ${String(params.uri)}${'x'.repeat(upstream.padding)}`,
        },
      ],
    }),
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(body) as { id?: string | number; method: string; params?: Record<string, unknown> };
      counts.set(msg.method, (counts.get(msg.method) ?? 0) + 1);
      if (msg.id === undefined) return void res.writeHead(202).end();
      if (options.session && msg.method === 'initialize') {
        const result = {
          protocolVersion: '2025-06-18',
          capabilities: { tools: {}, resources: {} },
          serverInfo: { name: 'hinted-2025', version: '1' },
        };
        return void res
          .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'hinted-session' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      }
      if (msg.method === 'subscriptions/listen') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const ack = {
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { notifications: msg.params?.notifications ?? {} },
        };
        res.write(`event: message\ndata: ${JSON.stringify(ack)}\n\n`);
        listeners.add(res);
        res.on('close', () => listeners.delete(res));
        opened();
        return;
      }
      const answer = results[msg.method];
      const payload = answer
        ? {
            result: {
              ...(options.session ? {} : { resultType: 'complete' }),
              ...answer(msg.params ?? {}),
              ...upstream.hints[msg.method],
            },
          }
        : { error: { code: -32601, message: `Method not found: ${msg.method}` } };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...payload }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return upstream;
}
