import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

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
  // Asynchronous by default: a line is queued and written while the event loop goes on, instead of
  // one blocking write(2) per line (the access log writes one per request). pino flushes what is
  // queued when the process exits.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
