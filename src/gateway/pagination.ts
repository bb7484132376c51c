import { GatewayError } from '../jsonrpc/errors.js';

/**
 * The gateway's own cursors over its merged lists. Opaque to clients; an offset into the
 * deterministic merged order, so any replica can continue a listing another replica began.
 */
const PREFIX = 'o:';

function encode(offset: number): string {
  return Buffer.from(`${PREFIX}${offset}`).toString('base64url');
}

function decode(cursor: unknown): number {
  if (typeof cursor !== 'string' || cursor.length > 64) throw invalid();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(PREFIX)) throw invalid();
  const offset = Number(text.slice(PREFIX.length));
  if (!Number.isSafeInteger(offset) || offset <= 0) throw invalid();
  return offset;
}

function invalid(): GatewayError {
  return new GatewayError('INVALID_PARAMS', 'Invalid cursor');
}

export function paginate<T>(
  items: ReadonlyArray<T>,
  cursor: unknown,
  pageSize: number,
): { page: T[]; nextCursor?: string } {
  const start = cursor === undefined ? 0 : decode(cursor);
  const end = start + pageSize;
  const page = items.slice(start, end);
  return end < items.length ? { page, nextCursor: encode(end) } : { page };
}
