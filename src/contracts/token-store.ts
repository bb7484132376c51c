/**
 * Tokens the gateway holds for its users towards upstreams (an exchanged token, a user's own
 * OAuth token): what the upstream layer asks of the store beside the session store (see
 * session/token-store.ts for how it keeps them).
 */

/** One user's token for one upstream. Never logged, never shown in /status. */
export interface StoredToken {
  accessToken: string;
  /** When it stops being good (ms since the epoch). */
  expiresAt: number;
  /** When it was issued (ms since the epoch): renewal comes a tenth of its life before expiry. */
  issuedAt?: number;
  refreshToken?: string;
}

/**
 * A record is keyed by (principal, upstream) and sealed to that pair: a principal reads only
 * what was written for it, whichever key names it.
 */
export interface TokenStore {
  /** undefined: none, expired, or not readable (written under another principal or a key no longer configured). */
  get(principal: string, upstream: string): Promise<StoredToken | undefined>;
  /** Kept until `retainUntil` (default: the token's expiry). */
  put(principal: string, upstream: string, token: StoredToken, retainUntil?: number): Promise<void>;
  delete(principal: string, upstream: string): Promise<void>;
  close(): Promise<void>;
}
