/** The `tls` block (towards an upstream, or Redis): its schema, its type, its checks. */
import { accessSync, constants } from 'node:fs';
import type { FromSchema } from 'json-schema-to-ts';

export const tlsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // PEM file of the CA(s) that sign the server's certificate (instead of the system's).
    caFile: { type: 'string', minLength: 1 },
    // PEM files of the gateway's client certificate and its key, for servers that require one.
    certFile: { type: 'string', minLength: 1 },
    keyFile: { type: 'string', minLength: 1 },
    // The name the server's certificate must carry, when it differs from the host connected to.
    serverName: { type: 'string', minLength: 1 },
    // false accepts any certificate: for a test bench, never for production.
    rejectUnauthorized: { type: 'boolean', default: true },
  },
  required: [],
} as const;

/** TLS towards a server the gateway connects to (an upstream, Redis). */
export type TlsConfig = FromSchema<typeof tlsSchema>;

/** A client certificate comes with its key, and every file named can be read. */
export function tlsChecks(tls: TlsConfig, at: string, problems: string[]): void {
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) problems.push(`${at}: certFile and keyFile go together (a client certificate and its key)`);
  for (const key of ['caFile', 'certFile', 'keyFile'] as const) {
    const file = tls[key];
    if (file === undefined) continue;
    try {
      accessSync(file, constants.R_OK);
    } catch {
      problems.push(`${at}.${key}: cannot read ${file}`);
    }
  }
}
