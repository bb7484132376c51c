/** A logger for a gateway under test whose every line lands, parsed, in an array the test reads. */
import { pino, type Logger } from 'pino';

export type LogLine = Record<string, unknown>;

/** pino at `level`, writing each JSON line into `lines` (synchronously: a line is there once logged). */
export function capturingLogger(level: string, lines: LogLine[]): Logger {
  return pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
}
