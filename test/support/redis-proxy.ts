/**
 * A TCP proxy in front of a redis-server that can refuse the gateway's connections by name: a
 * connection whose first command is `CLIENT SETNAME <name>` (ioredis sends it first when given a
 * connectionName) for a blocked name is cut, and blocking a name cuts its live connections.
 * One of the gateway's Redis connections failing while the others work, on demand.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface RedisProxy {
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  /** Cuts the connections named `name` and refuses new ones until unblocked. */
  block(name: string): void;
  unblock(name: string): void;
  /** How many connections named `name` were cut so far. */
  cut(name: string): number;
  close(): Promise<void>;
}

const SETNAME = /setname\r\n\$\d+\r\n([^\r]*)\r\n/i;

export async function startRedisProxy(redisPort: number): Promise<RedisProxy> {
  const blocked = new Set<string>();
  const live = new Map<Socket, string | undefined>();
  const cuts = new Map<string, number>();
  const cutOne = (client: Socket, name: string) => {
    cuts.set(name, (cuts.get(name) ?? 0) + 1);
    client.destroy();
  };
  const server: Server = createServer((client) => {
    const upstream = connect(redisPort, '127.0.0.1');
    live.set(client, undefined);
    const end = () => {
      live.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.once('close', end);
    upstream.once('close', end);
    client.once('error', end);
    upstream.once('error', end);
    client.once('data', (first: Buffer) => {
      const name = SETNAME.exec(first.toString('latin1'))?.[1];
      if (name !== undefined && blocked.has(name)) return cutOne(client, name);
      live.set(client, name);
      upstream.write(first);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    block(name) {
      blocked.add(name);
      for (const [client, n] of live) if (n === name) cutOne(client, name);
    },
    unblock(name) {
      blocked.delete(name);
    },
    cut: (name) => cuts.get(name) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of live.keys()) client.destroy();
        server.close(() => resolve());
      }),
  };
}
