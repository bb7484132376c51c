/**
 * The token store beside the session store: tokens of upstreams held for users, encrypted at
 * rest with AES-256-GCM. Each record is sealed with the (principal, upstream) pair it belongs to
 * as additional authenticated data, so a record read under any other pair (a copied key, a
 * guessed one) fails to open. Records name the key that sealed them: keys rotate by appending
 * one to `secrets.keys`; the newest seals, any configured one opens what it sealed.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { SecretKey } from '../config/schema.js';
import type { StoredToken } from '../contracts/token-store.js';

export type { StoredToken, TokenStore } from '../contracts/token-store.js';

const VERSION = 'v1';
const IV_BYTES = 12;

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
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#sealing.key, iv);
    cipher.setAAD(aad(this.#sealing.id, principal, upstream));
    const body = Buffer.concat([cipher.update(JSON.stringify(token), 'utf8'), cipher.final()]);
    return [VERSION, this.#sealing.id, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  /** undefined: not a record of ours, a key no longer configured, or sealed for another pair. */
  open(sealed: string, principal: string, upstream: string): StoredToken | undefined {
    const [version, kid, iv, body, tag] = sealed.split('.');
    if (version !== VERSION || kid === undefined || iv === undefined || body === undefined || tag === undefined) return undefined;
    const key = this.#keys.get(kid);
    if (!key) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(aad(kid, principal, upstream));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      const text = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      const token = JSON.parse(text) as StoredToken;
      return typeof token.accessToken === 'string' && typeof token.expiresAt === 'number' ? token : undefined;
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
