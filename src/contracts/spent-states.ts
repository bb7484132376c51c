/**
 * Where single-use tokens are recorded as used (the gateway's signed requestStates): in memory
 * for one replica, in Redis for all of them, so a state used on one replica is refused on any.
 */
export interface SpentStates {
  /**
   * Records `nonce` as used until `expiresAt` (epoch ms, the state's own expiry: a replay after
   * it is refused as expired). Resolves true for its first use, false when it was used already.
   */
  spend(nonce: string, expiresAt: number): Promise<boolean>;
  close(): Promise<void>;
}
