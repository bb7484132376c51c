/** A raw ws client of the gateway's /ws endpoint: every message it reads kept, with waits for answers and the close. */
import WebSocket from 'ws';
import { until } from './wait.js';

export function wsUrl(base: string | URL, path = '/ws'): URL {
  const url = new URL(path, base);
  url.protocol = 'ws:';
  return url;
}

/** A ws client that keeps every message it reads, with a wait for the next one. */
export class RawClient {
  readonly messages: Array<Record<string, unknown>> = [];
  closed: { code: number; reason: string } | undefined;
  constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => this.messages.push(JSON.parse(String(d)) as Record<string, unknown>));
    ws.on('close', (code, reason) => (this.closed = { code, reason: String(reason) }));
    ws.on('error', () => undefined);
  }
  static async open(base: string | URL, options: WebSocket.ClientOptions = {}): Promise<RawClient> {
    const ws = new WebSocket(wsUrl(base), 'mcp', options);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new RawClient(ws);
  }
  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }
  async answerTo(id: unknown, timeoutMs = 5000): Promise<Record<string, unknown>> {
    await until(
      `answer to ${String(id)}`,
      () => this.messages.some((m) => m.id === id && m.method === undefined),
      timeoutMs,
      5,
    );
    return this.messages.find((m) => m.id === id && m.method === undefined)!;
  }
  /** How many messages with `method` it has read so far. */
  count(method: string): number {
    return this.messages.filter((m) => m.method === method).length;
  }
  async closeCode(timeoutMs = 5000): Promise<number> {
    await until('the socket to close', () => this.closed !== undefined, timeoutMs, 5);
    return this.closed!.code;
  }
  async initialize(capabilities: Record<string, unknown> = {}): Promise<void> {
    this.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw-ws', version: '1' } },
    });
    const answer = await this.answerTo('init');
    if ((answer.result as { protocolVersion?: string } | undefined)?.protocolVersion !== '2025-06-18')
      throw new Error(`initialize: ${JSON.stringify(answer)}`);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }
}
