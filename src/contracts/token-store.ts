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
 * An authorization a user was asked for (grant authorization-code) and has not completed: made
 * when their call finds no token, read by /oauth/start, taken (once) by /oauth/callback.
 */
export interface PendingAuthorization {
  principal: string;
  upstream: string;
  /** The PKCE code_verifier (RFC 7636): only its S256 challenge leaves the gateway before the code comes back. */
  verifier: string;
  /** The elicitation the client was given (2025-11-25 names it in notifications/elicitation/complete). */
  elicitationId: string;
  /** Ms since the epoch. */
  expiresAt: number;
  /** The 2025 session that was asked: it hears notifications/elicitation/complete. */
  session?: string;
  /**
   * Set once the link's page was confirmed (a POST to /oauth/start, under a new state): the
   * sha256 of the cookie that browser holds, and the cookie's name. /oauth/callback takes only
   * such a pending, and only from that browser.
   */
  browser?: string;
  cookie?: string;
  /**
   * Set while the confirmed browser signs in at the gateway's own authorization server (auth.browserLogin): that
   * login's PKCE verifier.
   */
  loginVerifier?: string;
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
  /** Pending authorizations, by their state (random, unguessable): sealed like tokens, kept until their expiry. */
  putPending(state: string, pending: PendingAuthorization): Promise<void>;
  getPending(state: string): Promise<PendingAuthorization | undefined>;
  /** Reads and removes it at once: a callback's state works once, whichever replica it reaches. */
  takePending(state: string): Promise<PendingAuthorization | undefined>;
  close(): Promise<void>;
}
