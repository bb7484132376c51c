import { pino, type Logger, type LoggerOptions } from 'pino';
import { nextTurn } from '../timing/loop-turns.js';

export type { Logger };

type AsyncDestination = ReturnType<typeof pino.destination>;

/**
 * What the log may hold unwritten when whoever reads the gateway's stdout falls behind. Each request
 * writes an access line, so a client's request rate would otherwise grow memory without bound behind
 * a slow log reader; past this, lines are dropped and counted, and a line says how many once there
 * is room again.
 */
export const MAX_UNWRITTEN_LOG_BYTES = 64 * 1024 * 1024;

/** Batches holding lines not yet handed on: what an exit must still write. */
const pendingBatches = new Set<TurnBatchedDestination>();
let exitHookInstalled = false;

/**
 * The lines a turn of the event loop writes, handed to pino's asynchronous destination as one
 * string after the turn. Line by line, that destination measured the UTF-8 length of its whole
 * pending buffer (up to 16 KB) on every write: about 1 µs a line at 50 lines a turn, and the
 * access log writes one line per request.
 */
class TurnBatchedDestination implements pino.DestinationStream {
  #lines: string[] = [];
  /** Lines dropped since the last notice was written. */
  #dropped = 0;
  /** The notice of dropped lines is being written (its own drop is not a dropped line). */
  #noticing = false;
  #noticeDropped = false;

  constructor(private readonly out: AsyncDestination) {
    // sonic-boom emits 'drop' from within the write that it refuses.
    out.on('drop', (data: string) => {
      if (this.#noticing) this.#noticeDropped = true;
      else for (let i = data.indexOf('\n'); i !== -1; i = data.indexOf('\n', i + 1)) this.#dropped++;
    });
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      // No more turns after 'exit': what waits is written synchronously, as pino does for its destination.
      process.once('exit', () => {
        for (const batch of pendingBatches) batch.flushSync();
      });
    }
  }

  write(line: string): void {
    this.#lines.push(line);
    if (this.#lines.length === 1) {
      pendingBatches.add(this);
      nextTurn(() => this.#handOn());
    }
  }

  flushSync(): void {
    this.#handOn();
    this.out.flushSync();
  }

  #handOn(): void {
    if (this.#lines.length === 0) return;
    const lines = this.#lines;
    this.#lines = [];
    pendingBatches.delete(this);
    if (this.#dropped > 0) this.#notice();
    this.out.write(lines.length === 1 ? lines[0]! : lines.join(''));
  }

  /** Says how many lines were dropped, once there is room for that line. */
  #notice(): void {
    this.#noticing = true;
    this.#noticeDropped = false;
    this.out.write(noticeLine(this.#dropped));
    this.#noticing = false;
    if (!this.#noticeDropped) this.#dropped = 0;
  }
}

function noticeLine(dropped: number): string {
  const line = {
    level: 40,
    time: Date.now(),
    service: 'mcp-gateway',
    dropped,
    msg: 'log lines dropped: stdout fell behind',
  };
  return `${JSON.stringify(line)}\n`;
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'mcp-gateway' },
    // Credentials must never reach a log line, whatever logs a request or an upstream's env.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'headers.cookie',
        '*.token',
        '*.accessToken',
      ],
      censor: '[redacted]',
    },
  };
  // Asynchronous by default: lines are queued and written while the event loop goes on, instead of
  // one blocking write(2) per line (the access log writes one per request), and what is queued is
  // written when the process exits.
  return pino(
    options,
    destination ??
      new TurnBatchedDestination(pino.destination({ dest: 1, sync: false, maxLength: MAX_UNWRITTEN_LOG_BYTES })),
  );
}
