// API keys (auth.mode: api-key): a client sends its key as a bearer token, and the config knows
// each key only by its sha256. The presented key is hashed and compared with every configured
// hash in constant time, so neither the time taken nor an early exit tells how close a guess was.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthConfig } from '../../config/schema.js';

export interface ApiKeyHolder {
  name: string;
  scopes: ReadonlySet<string>;
}

/** The holder of a presented key, or undefined when it is no configured key. */
export function apiKeyVerifier(config: AuthConfig): (key: string) => ApiKeyHolder | undefined {
  const keys = config.apiKeys.map((k) => ({
    hash: Buffer.from(k.sha256, 'hex'),
    holder: { name: k.name, scopes: new Set(k.scopes) },
  }));
  return (key) => {
    const presented = createHash('sha256').update(key, 'utf8').digest();
    let found: ApiKeyHolder | undefined;
    // Every hash is compared, whatever matched: the loop takes as long for any key.
    for (const k of keys) if (timingSafeEqual(presented, k.hash) && found === undefined) found = k.holder;
    return found;
  };
}
