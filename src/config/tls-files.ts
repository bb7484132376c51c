import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { TlsConfig } from './schema.js';

/**
 * A `tls` block of the config as tls.connect takes it: the PEM files read once, at start-up
 * (tls.ts's checks found them readable at load).
 */
export function tlsConnectOptions(tls: TlsConfig | undefined): ConnectionOptions | undefined {
  if (!tls) return undefined;
  return {
    ...(tls.caFile ? { ca: readFileSync(tls.caFile) } : {}),
    ...(tls.certFile ? { cert: readFileSync(tls.certFile) } : {}),
    ...(tls.keyFile ? { key: readFileSync(tls.keyFile) } : {}),
    ...(tls.serverName ? { servername: tls.serverName } : {}),
    rejectUnauthorized: tls.rejectUnauthorized,
  };
}
