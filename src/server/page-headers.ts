/**
 * The headers of every HTML page the gateway serves (/status, the /oauth/* pages): no script and
 * nothing from elsewhere, so a page works offline and cannot be framed; no referrer, so a URL
 * holding a code or state is never passed on; never cached.
 */
export const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;
