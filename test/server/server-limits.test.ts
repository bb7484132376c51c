/**
 * server-limits as a module: the HTTP server's own refusals (serverOptions) and its connection cap
 * (capConnections), on a Fastify app of their own listening on 127.0.0.1, spoken to over raw
 * sockets (no client sends these bytes on cue). What Node answers before any route runs is
 * answered in JSON-RPC terms and the socket closed; one connection past the cap is dropped.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { errorObject } from '../../src/jsonrpc/errors.js';
import { capConnections, serverOptions } from '../../src/server/server-limits.js';
import { exampleConfig } from '../support/gateway.js';
import { quietLog, recordEvents, type RecordedEvents } from '../support/in-process.js';
import { httpRequest, rawSocket, type RawSocket } from '../support/raw-socket.js';
import { until } from '../support/wait.js';

const log = quietLog();
let app: FastifyInstance | undefined;
let events: RecordedEvents | undefined;
const sockets: RawSocket[] = [];

async function server(overrides: Record<string, unknown> = {}, maxConnections?: number): Promise<string> {
  events = recordEvents(['transport:rejection', 'connection:refused']);
  const config = exampleConfig({ server: overrides }).server;
  app = Fastify(serverOptions(config, events.diagnostics, log));
  app.get('/', async () => ({ ok: true }));
  if (maxConnections !== undefined) capConnections(app.server, maxConnections, events.diagnostics, log);
  return app.listen({ host: '127.0.0.1', port: 0 });
}

function open(base: string, bytes?: string): RawSocket {
  const s = rawSocket(base, bytes);
  sockets.push(s);
  return s;
}

/** The status line and the JSON-RPC error of a raw reply. */
function reply(raw: string): { status: string; code: number | undefined } {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return {
    status: raw.split('\r\n')[0] ?? '',
    code: body ? (JSON.parse(body) as { error?: { code: number } }).error?.code : undefined,
  };
}

afterEach(async () => {
  for (const s of sockets.splice(0)) s.socket.destroy();
  await app?.close();
  app = undefined;
  events?.stop();
});

describe('serverOptions', () => {
  it('answers bytes that are not HTTP with a JSON-RPC Invalid Request, and closes the socket', async () => {
    const base = await server();
    const s = open(base, 'HELLO THERE\r\n\r\n');
    await until('the socket was closed', () => s.closed());
    expect(reply(s.received())).toEqual({
      status: 'HTTP/1.1 400 Bad Request',
      code: errorObject('INVALID_REQUEST').code,
    });
    expect(events!.of('transport:rejection')).toEqual([expect.objectContaining({ errorType: 'INVALID_REQUEST' })]);
  });

  it('answers headers too large with HEADERS_TOO_LARGE', async () => {
    const base = await server();
    const s = open(base, httpRequest('GET', '/', { 'x-big': 'x'.repeat(20_000) }));
    await until('the socket was closed', () => s.closed());
    expect(reply(s.received())).toMatchObject({
      status: expect.stringMatching(/^HTTP\/1\.1 431 /),
      code: errorObject('HEADERS_TOO_LARGE').code,
    });
  });

  it('a socket that never finishes its headers gets REQUEST_TIMEOUT once headersTimeoutMs passed, and is closed', async () => {
    const base = await server({ headersTimeoutMs: 200, requestTimeoutMs: 200 });
    const s = open(base, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await until('the socket was closed', () => s.closed());
    expect(reply(s.received())).toMatchObject({
      status: expect.stringMatching(/^HTTP\/1\.1 408 /),
      code: errorObject('REQUEST_TIMEOUT').code,
    });
  });

  it('a whole request is served as usual', async () => {
    const base = await server();
    const res = await fetch(base);
    expect([res.status, await res.json()]).toEqual([200, { ok: true }]);
  });
});

describe('capConnections', () => {
  it('drops a connection past the cap as it is accepted; the one within it is served', async () => {
    const base = await server({}, 1);
    const first = open(base);
    await first.connected;
    await until(
      'the first connection is counted',
      async () => (await new Promise<number>((r) => app!.server.getConnections((_e, n) => r(n)))) === 1,
    );
    const second = open(base);
    await until('the second connection was dropped', () => second.closed());
    expect(events!.of('connection:refused')).toHaveLength(1);
    first.socket.write(httpRequest('GET', '/', { connection: 'close' }));
    await until('the first was answered', () => first.closed());
    expect(first.received()).toMatch(/^HTTP\/1\.1 200 /);
  });
});
