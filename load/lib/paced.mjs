// @ts-check
// An open-loop load at a fixed rate: request i is due at start + i / rate, spread evenly over the
// second, whether or not the ones before it were answered, over at most `connections` keep-alive
// connections (undici). Its latency runs from when it was due, not from when a free connection
// sent it, so a stall shows in every request that should have gone out during it (no coordinated
// omission). autocannon's `overallRate` is not that: each connection sends its share of a second
// back to back at the second's start, then waits for the next, so a "200/s" load is a burst of
// c-concurrent calls once a second, and its latencies are the burst's queueing.
//
// It takes a one-request autocannon plan (workloads.mjs: `setupRequest`, `onResponse`) and answers
// as autocannon's result does, for load.mjs.
import { Pool } from 'undici';

/** @param {number[]} sorted @param {number} q */
function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1)] ?? 0;
}

/**
 * @param {string} url
 * @param {number} connections
 * @param {number} seconds
 * @param {import('./load.mjs').Load} load
 * @param {number} rate  requests per second
 * @param {AbortSignal} [signal]
 * @returns {Promise<any>} autocannon's result shape: requests, latency (ms), errors, timeouts, non2xx, duration
 */
export async function runPaced(url, connections, seconds, load, rate, signal) {
  if (load.requests.length !== 1) throw new Error('a paced load takes a plan of one request');
  const plan = load.requests[0];
  const origin = new URL(url).origin;
  const pool = new Pool(origin, { connections, pipelining: 1, headersTimeout: 10_000, bodyTimeout: 10_000 });
  /** @type {number[]} */
  const latencies = [];
  let errors = 0;
  let timeouts = 0;
  let non2xx = 0;
  /** @type {Promise<void>[]} */
  const inFlight = [];
  const intervalMs = 1000 / rate;
  const start = performance.now();
  const total = Math.floor(seconds * rate);
  /** @param {number} due */
  const one = async (due) => {
    const req = plan.setupRequest ? plan.setupRequest({ ...plan }) : plan;
    try {
      const res = await pool.request({ method: req.method, path: req.path, headers: req.headers, body: req.body });
      const body = await res.body.text();
      if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
      plan.onResponse?.(res.statusCode, body, {}, res.headers);
      latencies.push(performance.now() - due);
    } catch (err) {
      errors++;
      if (/timeout/i.test(String(/** @type {Error} */ (err)?.name ?? err))) timeouts++;
    }
  };
  for (let i = 0; i < total && !signal?.aborted; i++) {
    const due = start + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(one(due));
  }
  await Promise.all(inFlight);
  const duration = (performance.now() - start) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((s, v) => s + v, 0) / Math.max(1, latencies.length);
  return {
    requests: { average: latencies.length / duration, total: latencies.length },
    duration,
    latency: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      average: mean,
      max: latencies.at(-1) ?? 0,
    },
    errors,
    timeouts,
    non2xx,
  };
}
