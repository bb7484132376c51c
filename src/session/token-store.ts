/**
 * The token store beside the session store: tokens of upstreams held for users, encrypted at
 * rest with AES-256-GCM. Each record is sealed with the (principal, upstream) pair it belongs to
 * as additional authenticated data, so a record read under any other pair (a copied key, a
 * guessed one) fails to open. Records name the key that sealed them: keys rotate by appending
 * one to `secrets.keys`; the newest seals, any configured one opens what it sealed.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { SecretKey } from '../config/schema.js';
import type { PendingAuthorization, StoredToken } from '../contracts/token-store.js';

export type { StoredToken, TokenStore } from '../contracts/token-store.js';

const VERSION = 'v1';
const IV_BYTES = 12;
/** The "principal" pending authorizations are sealed under: no principal has an empty issuer and a space. */
const PENDING = ' pending';

/** Seals and opens token records with the configured keys (the last one seals). */
export class TokenCipher {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #sealing: SecretKey;

  /** Without configured keys: one random key for this process (a memory store only; nothing survives it anyway). */
  constructor(keys: readonly SecretKey[]) {
    const usable = keys.length > 0 ? keys : [{ id: 'process', key: randomBytes(32) }];
    this.#keys = new Map(usable.map((k) => [k.id, k.key]));
    this.#sealing = usable[usable.length - 1]!;
  }

  get sealingKeyId(): string {
    return this.#sealing.id;
  }

  seal(token: StoredToken, principal: string, upstream: string): string {
    return this.#seal(token, principal, upstream);
  }

  /** undefined: not a record of ours, a key no longer configured, or sealed for another pair. */
  open(sealed: string, principal: string, upstream: string): StoredToken | undefined {
    const token = this.#open(sealed, principal, upstream) as Partial<StoredToken> | undefined;
    return typeof token?.accessToken === 'string' && typeof token.expiresAt === 'number'
      ? (token as StoredToken)
      : undefined;
  }

  /** A pending authorization, sealed to its state (so a record moved under another state does not open). */
  sealPending(pending: PendingAuthorization, state: string): string {
    return this.#seal(pending, PENDING, state);
  }

  openPending(sealed: string, state: string): PendingAuthorization | undefined {
    const p = this.#open(sealed, PENDING, state) as Partial<PendingAuthorization> | undefined;
    const ok =
      typeof p?.principal === 'string' &&
      typeof p.upstream === 'string' &&
      typeof p.verifier === 'string' &&
      typeof p.expiresAt === 'number';
    return ok && p.expiresAt! > Date.now() ? (p as PendingAuthorization) : undefined;
  }

  #seal(value: object, principal: string, upstream: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#sealing.key, iv);
    cipher.setAAD(aad(this.#sealing.id, principal, upstream));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return [
      VERSION,
      this.#sealing.id,
      iv.toString('base64url'),
      body.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  }

  #open(sealed: string, principal: string, upstream: string): unknown {
    const [version, kid, iv, body, tag] = sealed.split('.');
    if (version !== VERSION || kid === undefined || iv === undefined || body === undefined || tag === undefined)
      return undefined;
    const key = this.#keys.get(kid);
    if (!key) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(aad(kid, principal, upstream));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      const text = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      const value = JSON.parse(text) as unknown;
      return typeof value === 'object' && value !== null ? value : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Length-prefixed, so no two (principal, upstream) pairs give the same bytes. */
function aad(kid: string, principal: string, upstream: string): Buffer {
  return Buffer.from(`${kid.length}:${kid}${principal.length}:${principal}${upstream.length}:${upstream}`, 'utf8');
}

/** A record's name: a digest of its pair, so keys hold no user names either. */
export function tokenRecordId(principal: string, upstream: string): string {
  return createHash('sha256').update(`${principal.length}:${principal}${upstream}`).digest('base64url').slice(0, 32);
}

/** A pending authorization's record name: a digest of its state (the state itself is a bearer secret). */
export function pendingRecordId(state: string): string {
  return createHash('sha256').update(`pending:${state}`).digest('base64url').slice(0, 32);
}
