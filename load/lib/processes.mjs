// @ts-check
// Starting and stopping the processes a benchmark needs, on loopback only, and reading their
// CPU and memory from /proc. Every process started here is tracked, and `stopAll()` (run by
// run.mjs on completion, on errors and on Ctrl-C) stops whatever is still alive, together with
// its descendants.

import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';

export const LOOPBACK = '127.0.0.1';

/** Node flags for the processes under test, from BENCH_NODE_ARGS (e.g. --perf-basic-prof for `perf record`). */
export function benchNodeArgs() {
  return (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
}

/** Clock ticks per second for /proc/<pid>/stat (utime, stime). */
export const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** A free TCP port on 127.0.0.1 (for programs that cannot listen on port 0 and report it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, LOOPBACK, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The soft open-files limit this process (and its children) run with. */
export function openFilesLimit() {
  const r = spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' });
  const v = r.stdout?.trim();
  if (v === 'unlimited') return Infinity;
  const n = Number(v);
  return Number.isFinite(n) ? n : 1024;
}

/**
 * utime+stime (ticks), VmRSS and VmHWM (kB), read/write syscalls and context switches of one
 * process; undefined when it is gone. Syscalls matter on a VM: each write that wakes another
 * process can cost more than the JavaScript around it.
 * @param {number} pid
 * @returns {{ ticks: number, rssKb: number, hwmKb: number, syscalls: number, switches: number } | undefined}
 */
export function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces: fields are counted after its ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]); // fields 14 and 15
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+) kB/.exec(status);
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    const vol = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status);
    const invol = /nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status);
    let syscalls = 0;
    try {
      const io = readFileSync(`/proc/${pid}/io`, 'utf8');
      syscalls = Number(/syscr: (\d+)/.exec(io)?.[1] ?? 0) + Number(/syscw: (\d+)/.exec(io)?.[1] ?? 0);
    } catch {
      // /proc/<pid>/io is not readable for another user's process: counted as 0.
    }
    return {
      ticks,
      rssKb: rss ? Number(rss[1]) : 0,
      hwmKb: hwm ? Number(hwm[1]) : 0,
      syscalls,
      switches: Number(vol?.[1] ?? 0) + Number(invol?.[1] ?? 0),
    };
  } catch {
    return undefined;
  }
}

/** @param {number} pid */
export function rssKb(pid) {
  return procStat(pid)?.rssKb ?? 0;
}

/**
 * Every live descendant of `pid` (children, grandchildren, …), found through /proc.
 * @param {number} pid
 * @returns {number[]}
 */
export function descendants(pid) {
  /** @type {Map<number, number[]>} */
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      /* gone meanwhile */
    }
  }
  const out = [];
  const stack = [pid];
  while (stack.length > 0) {
    for (const c of children.get(/** @type {number} */ (stack.pop())) ?? []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

/** @param {number} pid */
export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * @typedef {object} Managed
 * @property {string} name
 * @property {number} pid
 * @property {import('node:child_process').ChildProcess} child
 * @property {() => string} output   last lines of stdout+stderr
 * @property {Promise<number | null>} exited
 * @property {(graceMs?: number) => Promise<void>} stop
 */

/** @type {Set<Managed>} */
const running = new Set();

/**
 * Starts a process in its own process group and waits until `ready` matches its output.
 * @param {object} o
 * @param {string} o.name
 * @param {string} o.command
 * @param {string[]} o.args
 * @param {Record<string, string | undefined>} [o.env]
 * @param {string} [o.cwd]
 * @param {RegExp} [o.ready]    a line of stdout/stderr that means "started"; group 1 may carry a URL
 * @param {number} [o.timeoutMs]
 * @param {boolean} [o.stdin]   give it a stdin pipe (default: none)
 * @param {boolean} [o.rawStdout]   leave stdout to the caller (child.stdout), only stderr is captured
 * @returns {Promise<{ proc: Managed, match: RegExpExecArray | undefined }>}
 */
export async function start({
  name,
  command,
  args,
  env,
  cwd,
  ready,
  timeoutMs = 20_000,
  stdin = false,
  rawStdout = false,
}) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: stop() signals the whole group
  });
  let tail = '';
  /** @type {((line: string) => void) | undefined} */
  let onLine;
  const feed = (/** @type {Buffer} */ chunk) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-8000);
    for (const line of text.split('\n')) {
      if (!onLine) break;
      onLine(line);
    }
  };
  if (!rawStdout) child.stdout?.on('data', feed);
  child.stderr?.on('data', feed);
  /** @type {Promise<number | null>} */
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ? 128 : code)));
  const pid = /** @type {number} */ (child.pid);

  /** @type {Managed} */
  const proc = {
    name,
    pid,
    child,
    output: () => tail,
    exited,
    stop: (graceMs = 5000) => stopProcess(proc, graceMs),
  };
  running.add(proc);
  exited.then(() => running.delete(proc));

  if (!ready) return { proc, match: undefined };
  const match = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      onLine = undefined;
      reject(new Error(`${name} did not start within ${timeoutMs} ms; output:\n${tail}`));
    }, timeoutMs);
    onLine = (line) => {
      const m = ready.exec(line);
      if (m) {
        clearTimeout(timer);
        onLine = undefined;
        resolve(m);
      }
    };
    onLine(tail); // it may have printed already
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready; output:\n${tail}`));
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  }).catch(async (err) => {
    await proc.stop(1000);
    throw err;
  });
  return { proc, match };
}

/**
 * @param {number} pid
 * @param {NodeJS.Signals} signal
 */
function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
  }
}

/**
 * SIGTERM to the process group (a gateway then drains and stops its own workers), SIGKILL to
 * it and every descendant still alive after `graceMs`.
 * @param {Managed} proc
 * @param {number} graceMs
 */
async function stopProcess(proc, graceMs) {
  const kids = descendants(proc.pid);
  if (isAlive(proc.pid)) {
    signalGroup(proc.pid, 'SIGTERM');
    await Promise.race([proc.exited, new Promise((r) => setTimeout(r, graceMs))]);
  }
  if (isAlive(proc.pid)) signalGroup(proc.pid, 'SIGKILL');
  // Workers in process groups of their own (the gateway's, supergateway's children) get a
  // moment to see their stdin close, then are killed.
  const deadline = Date.now() + 2000;
  while (kids.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const k of kids) if (isAlive(k)) signalGroup(k, 'SIGKILL');
  await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 1000))]);
  running.delete(proc);
}

/** Stops every process started here that is still running. */
export async function stopAll(graceMs = 3000) {
  await Promise.all([...running].map((p) => p.stop(graceMs)));
}

/** Last resort (process 'exit' handler): SIGKILL everything still tracked, synchronously. */
export function killAllNow() {
  for (const p of running) {
    for (const k of descendants(p.pid)) signalGroup(k, 'SIGKILL');
    signalGroup(p.pid, 'SIGKILL');
  }
  running.clear();
}

/** Names and pids of the processes still tracked (for the final check). */
export function stillRunning() {
  return [...running].filter((p) => isAlive(p.pid)).map((p) => `${p.name} (${p.pid})`);
}

/**
 * CPU of a set of processes over an interval, and their RSS sampled while it runs.
 * `pids()` is re-read at each sample so children that appear later are counted.
 * @param {() => number[]} pids
 * @param {number} [intervalMs]
 */
export function meter(pids, intervalMs = 250) {
  /** @typedef {{ ticks: number, syscalls: number, switches: number }} Counts */
  /** @type {Map<number, Counts>} */
  const first = new Map();
  /** @type {Map<number, Counts>} */
  const last = new Map();
  let peakRssKb = 0;
  let lastRssKb = 0;
  const sample = () => {
    let rss = 0;
    for (const pid of pids()) {
      const s = procStat(pid);
      if (!s) continue;
      const counts = { ticks: s.ticks, syscalls: s.syscalls, switches: s.switches };
      if (!first.has(pid)) first.set(pid, counts);
      last.set(pid, counts);
      rss += s.rssKb;
    }
    lastRssKb = rss;
    if (rss > peakRssKb) peakRssKb = rss;
  };
  const t0 = process.hrtime.bigint();
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    /** @returns {{ cpuPct: number, rssKb: number, peakRssKb: number, processes: number, syscalls: number, switches: number }} */
    stop() {
      clearInterval(timer);
      sample();
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const sum = { ticks: 0, syscalls: 0, switches: 0 };
      for (const [pid, end] of last) {
        const begin = first.get(pid) ?? end;
        sum.ticks += end.ticks - begin.ticks;
        sum.syscalls += end.syscalls - begin.syscalls;
        sum.switches += end.switches - begin.switches;
      }
      return {
        cpuPct: (sum.ticks / CLK_TCK / seconds) * 100,
        rssKb: lastRssKb,
        peakRssKb,
        processes: last.size,
        syscalls: sum.syscalls,
        switches: sum.switches,
      };
    },
  };
}

/** Busy and total CPU ticks of the whole machine (all cores), from /proc/stat. */
export function machineTicks() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0); // user … steal (guest is inside user)
    const idle = (v[3] ?? 0) + (v[4] ?? 0); // idle + iowait
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

/**
 * CPU the whole machine used over `ms`, as % of one core.
 * @param {number} ms
 */
export async function machineBusyPct(ms = 1000) {
  const a = machineTicks();
  const t0 = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, ms));
  const b = machineTicks();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return ((b.busy - a.busy) / CLK_TCK / seconds) * 100;
}

/**
 * A throwaway redis-server on a free loopback port, keeping nothing on disk.
 * @returns {Promise<{ proc: Awaited<ReturnType<typeof start>>['proc'], url: string }>}
 */
export async function startRedisServer() {
  const port = await freePort();
  const { proc } = await start({
    name: 'redis-server',
    command: 'redis-server',
    args: ['--port', String(port), '--bind', LOOPBACK, '--save', '', '--appendonly', 'no'],
    ready: /Ready to accept connections/,
  });
  return { proc, url: `redis://${LOOPBACK}:${port}` };
}

/**
 * RSS (kB) of `pid` as the median of five readings 100 ms apart, after a settle and, with
 * `forceGc`, a full GC (the process must run load/lib/gc-on-signal.cjs: SIGUSR2 → gc()).
 * @param {number} pid
 * @param {number} settleMs
 * @param {boolean} forceGc
 */
export async function settledRss(pid, settleMs, forceGc) {
  const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
  await sleep(settleMs);
  if (forceGc) {
    process.kill(pid, 'SIGUSR2');
    await sleep(500);
  }
  const v = [];
  for (let i = 0; i < 5; i++) {
    v.push(rssKb(pid));
    await sleep(100);
  }
  v.sort((a, b) => a - b);
  return /** @type {number} */ (v[2]);
}
