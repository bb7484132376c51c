// @ts-check
// For the example upstreams: a wait that a client's notifications/cancelled (the SDK's
// request signal) cuts short.

/** The error a cancelled call ends with: the signal's reason when it is one. @param {AbortSignal} signal */
export function abortError(signal) {
  const reason = signal.reason;
  return reason instanceof Error ? reason : new Error(`cancelled${reason ? `: ${String(reason)}` : ''}`);
}

/**
 * Resolves after `ms`, or rejects as soon as `signal` aborts.
 * @param {number} ms
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
