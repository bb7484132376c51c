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
  return destination ? pino(options, destination) : pino(options);
}
