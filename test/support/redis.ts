/**
 * A throwaway redis-server on a free loopback port, no persistence (`--save ''`, no AOF): a
 * restart comes back empty. Each test file starts its own and stops it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';

export interface RedisServer {
  readonly port: number;
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  readonly running: boolean;
  /** Stops the server (SIGTERM, SIGKILL after 3 s) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was saved). */
  start(): Promise<void>;
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: a Redis that accepts connections but never answers. */
  pause(): void;
  resume(): void;
  /** Sends one command and returns the raw RESP reply. */
  command(...args: string[]): Promise<string>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function encode(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** One command over a fresh connection; resolves once a complete reply has arrived. */
export function redisCommand(port: number, args: string[], timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis ${args[0]}: no reply within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (err: Error | undefined, value?: string) => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(value ?? '');
    };
    socket.once('error', (err) => done(err));
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
      if (complete(data)) done(undefined, data);
    });
    socket.write(encode(args));
  });
}

/** Whether `s` holds one whole RESP2 reply (enough for the commands the tests send). */
function complete(s: string): boolean {
  const end = s.indexOf('\r\n');
  if (end === -1) return false;
  const type = s[0];
  if (type === '+' || type === '-' || type === ':') return true;
  if (type === '$') {
    const len = Number(s.slice(1, end));
    return len < 0 || Buffer.byteLength(s, 'utf8') >= end + 2 + len + 2;
  }
  if (type === '*') {
    // Arrays of bulk strings (CONFIG GET): count the bulk headers and check the last one is whole.
    const n = Number(s.slice(1, end));
    if (n <= 0) return true;
    const lines = s.split('\r\n');
    return lines.length >= 1 + n * 2 + 1;
  }
  return true;
}

async function waitForPing(port: number, child: ChildProcess, output: () => string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `redis-server exited (${child.exitCode ?? child.signalCode}) before answering PING:\n${output()}`,
      );
    }
    try {
      if ((await redisCommand(port, ['PING'], 500)).startsWith('+PONG')) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts redis-server on a free port (or `port`) and resolves once it answers PING. `args` are
 * extra server options, e.g. ['--rename-command', 'CONFIG', ''] for a managed-Redis lookalike;
 * `configFile` is read first (a sentinel needs one it can rewrite: see redis-sentinel.ts).
 */
export async function startRedis(
  options: { port?: number; args?: string[]; configFile?: string } = {},
): Promise<RedisServer> {
  let p = options.port ?? (await freePort());
  const extra = options.args ?? [];
  let child: ChildProcess | undefined;

  const start = async () => {
    if (child) throw new Error('redis-server is already running');
    let output = '';
    const file = options.configFile ? [options.configFile] : [];
    const proc = spawn(
      'redis-server',
      [...file, '--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    proc.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const spawned = new Promise<void>((resolve, reject) => {
      proc.once('spawn', resolve);
      proc.once('error', (err) => reject(new Error(`cannot start redis-server (is it installed?): ${err.message}`)));
    });
    await spawned;
    child = proc;
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    try {
      await waitForPing(p, proc, () => output);
    } catch (err) {
      await stop();
      throw err;
    }
  };

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGCONT'); // a paused server would never act on SIGTERM
    proc.kill('SIGTERM');
    const killer = setTimeout(() => proc.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(killer);
  };

  // A free port can be taken between freePort() and redis-server's bind (CI once lost one to another
  // test's process): with no port asked for, such a start is tried again on a fresh one.
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (err) {
      const taken = err instanceof Error && err.message.includes('Address already in use');
      if (!taken || options.port !== undefined || attempt === 3) throw err;
      p = await freePort();
    }
  }
  return {
    port: p,
    url: `redis://127.0.0.1:${p}`,
    get running() {
      return child !== undefined;
    },
    stop,
    start,
    restart: async () => {
      await stop();
      await start();
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    command: (...args: string[]) => redisCommand(p, args),
  };
}

/** Calls of one command since the last CONFIG RESETSTAT, from INFO commandstats. */
export async function commandCalls(redis: RedisServer, command: string): Promise<number> {
  const info = await redis.command('INFO', 'commandstats');
  const match = new RegExp(`cmdstat_${command.toLowerCase()}:calls=(\\d+)`).exec(info);
  return match ? Number(match[1]) : 0;
}
