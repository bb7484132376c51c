/**
 * The one ajv the config is checked with: the whole file at load (load.ts) and an interceptor
 * server's `server:` entry against the upstream schema (interceptor-servers.ts), so both read a
 * schema the same way and fill the same defaults.
 */
import { Ajv } from 'ajv';

// `discriminator`: an upstream is checked against the schema of its `transport` only.
// `optimize: false`: see NO_NAME_POLLUTION in jsonrpc/params-schemas.ts (the optimiser fills V8's empty-object map).
export const configAjv = new Ajv({
  allErrors: true,
  useDefaults: true,
  strict: true,
  discriminator: true,
  code: { optimize: false },
});
