/**
 * A raw TCP client of a gateway on loopback: it sends bytes as given and reads only while the
 * test lets it. Stands for clients that stop reading (pause), or that reset the connection right
 * after sending a request (abort), which no fetch client does on cue.
 */
import { connect, type Socket } from 'node:net';

export interface RawSocket {
  readonly socket: Socket;
  /** Everything the gateway wrote that was read, as text. */
  received(): string;
  /** The gateway closed the connection (as far as this client has read). */
  closed(): boolean;
  /** Resolves once the connection is up. */
  readonly connected: Promise<void>;
}

/** Connects to `base` (http://127.0.0.1:port) and writes `bytes`, if any. */
export function rawSocket(base: string, bytes?: string): RawSocket {
  const url = new URL(base);
  const socket = connect(Number(url.port), '127.0.0.1');
  let data = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
  socket.on('error', () => undefined); // a reset counts as closed
  socket.on('close', () => (closed = true));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  if (bytes !== undefined) socket.write(bytes);
  return { socket, received: () => data, closed: () => closed, connected };
}

/** An HTTP/1.1 request as text: `headers` after Host; a body gets its Content-Length. */
export function httpRequest(method: string, path: string, headers: Record<string, string>, body?: string): string {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}
