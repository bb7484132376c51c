import { CLAIM_REF } from '../config/remote-upstream.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { Caller } from '../contracts/request-context.js';

/** Visible ASCII, spaces inside only: nothing a header could be split or smuggled with. */
const HEADER_SAFE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const MAX_VALUE = 1024;

/**
 * An upstream's configured headers, split into the fixed ones (sent with every request) and
 * those built from the caller's token's claims (`X-User: ${claims.sub}`), sent only with calls
 * made for a user. A claim that is missing, not a string or number, or not header-safe fails
 * the call with CLAIM_HEADER_INVALID before anything is sent.
 */
export class ClaimHeaders {
  readonly fixed: Record<string, string> = {};
  readonly #templates: Array<[string, string]> = [];

  constructor(headers: Record<string, string>) {
    for (const [name, value] of Object.entries(headers)) {
      if (/\$\{claims\./.test(value)) this.#templates.push([name, value]);
      else this.fixed[name] = value;
    }
  }

  get any(): boolean {
    return this.#templates.length > 0;
  }

  resolve(caller: Caller): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, template] of this.#templates) {
      out[name] = template.replace(CLAIM_REF, (_m, claim: string) => {
        const v = Object.hasOwn(caller.claims, claim) ? caller.claims[claim] : undefined;
        if (typeof v !== 'string' && typeof v !== 'number')
          throw invalid(name, claim, 'the token has no such claim (or it is not a string)');
        return String(v);
      });
      if (!HEADER_SAFE.test(out[name]) || out[name].length > MAX_VALUE)
        throw invalid(
          name,
          undefined,
          'its value holds characters a header cannot carry (control characters, CR/LF, non-ASCII) or is too long',
        );
    }
    return out;
  }
}

function invalid(header: string, claim: string | undefined, why: string): GatewayError {
  return new GatewayError(
    'CLAIM_HEADER_INVALID',
    `Header ${header}${claim ? ` (claims.${claim})` : ''} cannot be sent: ${why}`,
    { header, ...(claim ? { claim } : {}) },
  );
}
