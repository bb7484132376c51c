// The policy in force (authorization.policyFile), swapped whole by a reload: a request decides
// against the set it read when it came in. Also what the config knows of principals that a
// request context does not carry: an API key's scopes, by the key's name.
import type { GatewayConfig } from '../config/schema.js';
import { PolicySet } from './policy-set.js';

export class LivePolicy {
  #set: PolicySet | undefined;
  #keyScopes: ReadonlyMap<string, readonly string[]>;

  /** Compiles the config's file: a PolicyFileError (line, column) when it does not parse or validate. */
  constructor(config: Pick<GatewayConfig, 'authorization' | 'auth'>) {
    this.#set = policyOf(config);
    this.#keyScopes = keyScopesOf(config);
  }

  get set(): PolicySet | undefined {
    return this.#set;
  }

  /** An API key's scopes (auth.mode api-key: the principal is the key's name). */
  keyScopes(principal: string): readonly string[] | undefined {
    return this.#keyScopes.get(principal);
  }

  /** Reads `next`'s file (throws when it is broken: the reload is refused); the result puts it in force. */
  read(next: Pick<GatewayConfig, 'authorization' | 'auth'>): () => void {
    const set = policyOf(next);
    return () => {
      this.#set = set;
    };
  }
}

function policyOf(config: Pick<GatewayConfig, 'authorization'>): PolicySet | undefined {
  const file = config.authorization?.policyFile;
  return file === undefined ? undefined : PolicySet.load(file);
}

function keyScopesOf(config: Pick<GatewayConfig, 'auth'>): ReadonlyMap<string, readonly string[]> {
  const keys = config.auth.mode === 'api-key' ? config.auth.apiKeys : [];
  return new Map(keys.map((k) => [k.name, k.scopes ?? []]));
}
