// The gateway's one signed token: a JSON payload the client carries and hands back (an
// input-required round's requestState, a wrapped task id), which only a holder of the key can
// make. Every kind of token names its purpose, and the purpose is part of what is signed, so
// one kind never verifies as another even under one key (`stateless.stateSecret` signs several).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface SignOptions {
  /**
   * Whose or what the token is for (a principal, a session), signed but not carried: the token
   * verifies only where the same binding is given.
   */
  binding?: string;
  /** Epoch ms after which the token no longer verifies (`open` still reads it, as expired). */
  expiresAt?: number;
}

/** A token whose signature holds: its payload, and whether its expiry has passed. */
export interface OpenedToken {
  payload: unknown;
  expiresAt: number | undefined;
  expired: boolean;
}

/** `<payload>.<mac>`, or `<payload>.<expiresAt>.<mac>`: base64url JSON, decimal epoch ms, base64url HMAC. */
const BODY = /^[A-Za-z0-9_-]+$/;
const EXPIRY = /^[0-9]{1,16}$/;
/** Purposes are names such as `requestState/chain`: no separator can hide in one. */
const PURPOSE = /^[A-Za-z0-9/_.-]+$/;

/** HMAC-SHA256 tokens under one key. */
export class SignedTokens {
  readonly #key: Buffer;

  /** `secret`: shared by the replicas that must read each other's tokens; none: a random key of this process. */
  constructor(secret?: string | Buffer) {
    this.#key = secret === undefined ? randomBytes(32) : Buffer.isBuffer(secret) ? secret : Buffer.from(secret, 'utf8');
  }

  sign(purpose: string, payload: object | string | number | boolean | null, options: SignOptions = {}): string {
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    const signed = options.expiresAt === undefined ? body : `${body}.${Math.floor(options.expiresAt)}`;
    return `${signed}.${this.#mac(purpose, options.binding ?? '', signed)}`;
  }

  /**
   * The token's payload when it was made here (this key) for this purpose and binding, expired
   * or not; undefined when it was altered, forged, or made for another purpose or binding.
   */
  open(purpose: string, token: string, binding = ''): OpenedToken | undefined {
    const dot = token.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const signed = token.slice(0, dot);
    const [body, expiry, extra] = signed.split('.');
    if (body === undefined || !BODY.test(body) || extra !== undefined) return undefined;
    if (expiry !== undefined && !EXPIRY.test(expiry)) return undefined;
    // Compared as text: a MAC has one spelling, so no other spelling of the same bytes passes.
    const got = Buffer.from(token.slice(dot + 1), 'utf8');
    const want = Buffer.from(this.#mac(purpose, binding, signed), 'utf8');
    if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
    const payload = parseBody(body);
    if (payload === undefined) return undefined;
    const expiresAt = expiry === undefined ? undefined : Number(expiry);
    return { payload: payload.value, expiresAt, expired: expiresAt !== undefined && expiresAt <= Date.now() };
  }

  /** The payload of a token that `open` accepts and that has not expired; else undefined. */
  verify(purpose: string, token: string, binding = ''): unknown {
    const opened = this.open(purpose, token, binding);
    return opened && !opened.expired ? opened.payload : undefined;
  }

  #mac(purpose: string, binding: string, signed: string): string {
    if (!PURPOSE.test(purpose)) throw new Error(`signed token purpose ${JSON.stringify(purpose)} is not a name`);
    // purpose has no NUL and the signed part none either, so the binding between them is unambiguous.
    return createHmac('sha256', this.#key).update(`${purpose}\u0000${binding}\u0000${signed}`).digest('base64url');
  }
}

/**
 * A token's payload, unverified: for routing only (which replica holds what the token names),
 * never for a decision; that replica opens it.
 */
export function peekSignedToken(token: string): unknown {
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  return parseBody(token.slice(0, dot))?.value;
}

function parseBody(body: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown };
  } catch {
    return undefined;
  }
}
