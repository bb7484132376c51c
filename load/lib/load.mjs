// @ts-check
// One measurement: an autocannon warm-up (discarded), then the measured run, with the CPU and
// RSS of the processes under test metered over exactly the measured run.

// @ts-ignore autocannon ships no type declarations
import autocannon from 'autocannon';
import { runPaced } from './paced.mjs';
import { CLK_TCK, machineBusyPct, machineTicks, meter } from './processes.mjs';

/** The load running now (autocannon, or a paced one), so Ctrl-C can stop it. */
/** @type {any} */
let current;

export function abortCurrent() {
  try {
    current?.stop();
  } catch {
    /* already stopped */
  }
}

/**
 * @typedef {object} Counters   what an onResponse hook tallied
 * @property {number} checked
 * @property {number} bad        replies that failed the light check (non-2xx, no result, JSON-RPC error)
 * @property {number} rpcErrors  replies carrying a JSON-RPC error
 * @property {Record<string, number>} [extra]
 */

/**
 * @typedef {object} Load   a fresh request plan (new counters) for one autocannon run
 * @property {any[]} requests   autocannon `requests`
 * @property {Counters} counters
 * @property {() => Record<string, unknown>} [finish]  called after the run: extra numbers (e.g. a sample verification)
 */

/**
 * @typedef {object} Measurement
 * @property {number} reqPerSec       autocannon's mean of per-second samples
 * @property {number} completed       responses received in the measured run
 * @property {number} seconds
 * @property {{ p50: number, p90: number, p99: number, mean: number, max: number }} latencyMs
 * @property {number} errors          connection errors + timeouts
 * @property {number} timeouts
 * @property {number} non2xx
 * @property {number} bad             replies that failed the check (includes non-2xx)
 * @property {number} rpcErrors
 * @property {Record<string, { cpuPct: number, rssKb: number, peakRssKb: number, processes: number }>} procs
 * @property {number} loadgenCpuPct   this process (autocannon) over the run
 * @property {number} machineCpuPct   the whole machine over the run, % of one core
 * @property {number} otherCpuPct     what neither the bench nor the processes under test used (other work on the machine)
 * @property {number} quietWaitS      how long the run waited for the machine to calm down first
 * @property {{ start: number, end: number }} window   the measured run, epoch ms
 * @property {number[]} [attempts]    other CPU % of each attempt (see retryWhileBusy)
 * @property {Record<string, unknown>} extra
 */

/**
 * @param {object} o
 * @param {string} o.url
 * @param {number} o.connections
 * @param {number} o.duration   seconds
 * @param {number} o.warmup     seconds (0: none)
 * @param {() => Load} o.makeLoad
 * @param {Record<string, () => number[]>} [o.meters]  named process sets to meter (e.g. gateway, upstream)
 * @param {number} [o.pipelining]
 * @param {boolean} [o.quiet]   wait for a quiet machine first (false: the load beside it is the point)
 * @param {number} [o.rate]     requests per second over all connections (unset: as fast as they answer)
 * @returns {Promise<Measurement>}
 */
export async function measure(o) {
  if (o.quiet === false) return measureOnce(o);
  return retryWhileBusy(() => measureOnce(o));
}

/**
 * Runs a measurement again (BENCH_RETRIES times at most, default 1) when other work on the
 * machine used more than BENCH_OTHER_MAX % of a core (default 30) during it; keeps the cleanest.
 * @template {{ otherCpuPct: number, attempts?: number[] }} M
 * @param {() => Promise<M>} once
 * @returns {Promise<M>}
 */
export async function retryWhileBusy(once) {
  const retries = Number(process.env.BENCH_RETRIES ?? 1);
  const maxOther = Number(process.env.BENCH_OTHER_MAX ?? 30);
  /** @type {M | undefined} */
  let best;
  /** @type {number[]} */
  const attempts = [];
  for (let i = 0; i <= retries; i++) {
    const m = await once();
    attempts.push(Math.round(m.otherCpuPct));
    if (!best || m.otherCpuPct < best.otherCpuPct) best = m;
    if (m.otherCpuPct <= maxOther) break;
    if (i < retries)
      process.stderr.write(
        `bench: other work used ${m.otherCpuPct.toFixed(0)} % of a core during the run: measuring again\n`,
      );
  }
  const result = /** @type {M} */ (best);
  result.attempts = attempts;
  return result;
}

/**
 * @param {Parameters<typeof measure>[0]} o
 * @returns {Promise<Measurement>}
 */
async function measureOnce({
  url,
  connections,
  duration,
  warmup,
  makeLoad,
  meters = {},
  pipelining = 1,
  quiet = true,
  rate,
}) {
  const quietWaitS = quiet ? await waitForQuiet() : 0;
  if (warmup > 0) await runOnce(url, connections, warmup, makeLoad(), pipelining, rate);
  const load = makeLoad();
  const running = Object.fromEntries(Object.entries(meters).map(([name, pids]) => [name, meter(pids)]));
  const cpu0 = process.cpuUsage();
  const m0 = machineTicks();
  const start = Date.now();
  const t0 = process.hrtime.bigint();
  const r = await runOnce(url, connections, duration, load, pipelining, rate);
  const end = Date.now();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const m1 = machineTicks();
  const procs = Object.fromEntries(Object.entries(running).map(([name, m]) => [name, m.stop()]));
  const loadgenCpuPct = ((cpu.user + cpu.system) / 1e6 / wall) * 100;
  const machineCpuPct = ((m1.busy - m0.busy) / CLK_TCK / wall) * 100;
  const ours = loadgenCpuPct + Object.values(procs).reduce((s, p) => s + p.cpuPct, 0);
  return {
    reqPerSec: r.requests.average,
    completed: r.requests.total,
    seconds: r.duration,
    latencyMs: {
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      mean: r.latency.average,
      max: r.latency.max,
    },
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    bad: load.counters.bad,
    rpcErrors: load.counters.rpcErrors,
    procs,
    loadgenCpuPct,
    machineCpuPct,
    otherCpuPct: Math.max(0, machineCpuPct - ours),
    quietWaitS,
    window: { start, end },
    extra: { checked: load.counters.checked, ...load.counters.extra, ...(load.finish?.() ?? {}) },
  };
}

/**
 * Other work on the machine skews every number: wait (up to BENCH_QUIET_WAIT s, default 30)
 * until the whole machine is below BENCH_QUIET_PCT (default 25) % of one core over a second.
 * Returns the seconds waited.
 */
export async function waitForQuiet() {
  const maxS = Number(process.env.BENCH_QUIET_WAIT ?? 30);
  const limit = Number(process.env.BENCH_QUIET_PCT ?? 25);
  const t0 = Date.now();
  let warned = false;
  for (;;) {
    const busy = await machineBusyPct(1000);
    const waited = (Date.now() - t0) / 1000;
    if (busy <= limit) return Math.max(0, waited - 1);
    if (waited >= maxS) {
      process.stderr.write(
        `bench: machine still busy (${busy.toFixed(0)} % of a core) after ${maxS} s: measuring anyway\n`,
      );
      return waited;
    }
    if (!warned) {
      process.stderr.write(
        `bench: machine busy (${busy.toFixed(0)} % of a core used by other work): waiting up to ${maxS} s for it to calm down\n`,
      );
      warned = true;
    }
  }
}

/**
 * @param {string} url
 * @param {number} connections
 * @param {number} seconds
 * @param {Load} load
 * @param {number} pipelining
 * @param {number} [rate]
 * @returns {Promise<any>}
 */
function runOnce(url, connections, seconds, load, pipelining, rate) {
  // At a fixed rate, paced evenly (paced.mjs: why not autocannon's overallRate), unless asked.
  if (rate && process.env.BENCH_RATE_DRIVER !== 'autocannon') {
    const aborted = new AbortController();
    current = { stop: () => aborted.abort() };
    return runPaced(url, connections, seconds, load, rate, aborted.signal).finally(() => (current = undefined));
  }
  return new Promise((resolve, reject) => {
    current = autocannon(
      {
        url,
        connections,
        duration: seconds,
        pipelining,
        requests: load.requests,
        timeout: 10,
        ...(rate ? { overallRate: rate } : {}),
      },
      (/** @type {Error | null} */ err, /** @type {any} */ result) => {
        current = undefined;
        if (err) reject(err);
        else resolve(result);
      },
    );
  });
}

/**
 * An empty tally.
 * @returns {Counters}
 */
export function counters() {
  return { checked: 0, bad: 0, rpcErrors: 0, extra: {} };
}
