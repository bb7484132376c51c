const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * DNS-rebinding protection: a browser page may only reach the gateway from a localhost origin
 * or one the operator allowed. Requests without Origin (non-browser clients) pass.
 */
export function createOriginCheck(allowed: readonly string[]): (origin: string | undefined) => boolean {
  const exact = new Set(allowed.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  return (origin) => {
    if (origin === undefined) return true;
    const o = origin.toLowerCase();
    if (exact.has(o)) return true;
    let url: URL;
    try {
      url = new URL(o);
    } catch {
      return false;
    }
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOCAL_HOSTS.has(url.hostname) && url.origin === o;
  };
}
