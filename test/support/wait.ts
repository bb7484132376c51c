/** Polls `check` until it holds, at most `timeoutMs`; resolves with how long it took. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000, intervalMs = 20): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return Date.now() - start;
}
