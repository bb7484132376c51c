/** The `tls` block (towards an upstream, or Redis): its schema, its type, its checks. */
import { accessSync, constants } from 'node:fs';
import type { FromSchema } from 'json-schema-to-ts';

export const tlsSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'TLS towards a server the gateway connects to (https only): a private CA, a client certificate (mTLS).',
  properties: {
    caFile: {
      type: 'string',
      minLength: 1,
      description: "PEM file of the CA(s) that sign the server's certificate, instead of the system's.",
    },
    certFile: {
      type: 'string',
      minLength: 1,
      description: "PEM file of the gateway's client certificate, presented to servers that require one; with keyFile.",
    },
    keyFile: { type: 'string', minLength: 1, description: "PEM file of the client certificate's key; with certFile." },
    serverName: {
      type: 'string',
      minLength: 1,
      description: "The name the server's certificate must carry, when it differs from the host connected to.",
    },
    rejectUnauthorized: {
      type: 'boolean',
      default: true,
      description: 'false accepts any certificate: for a test bench, never for production.',
    },
  },
  required: [],
} as const;

/** TLS towards a server the gateway connects to (an upstream, Redis). */
export type TlsConfig = FromSchema<typeof tlsSchema>;

/** A client certificate comes with its key, and every file named can be read. */
export function tlsChecks(tls: TlsConfig, at: string, problems: string[]): void {
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined))
    problems.push(`${at}: certFile and keyFile go together (a client certificate and its key)`);
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
