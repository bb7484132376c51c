/**
 * vitest globalSetup: after the whole run, finds processes the suite started that are still alive
 * (an upstream whose gateway was killed outright is re-parented and outlives the run), names each
 * one on stderr with its state, and SIGKILLs it by pid, so that no run leaves a process behind
 * for the next one to trip over.
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

interface ProcInfo {
  pid: number;
  ppid: number;
  state: string;
  startTicks: number;
  cmdline: string;
  cwd: string;
}

function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name in parentheses: state ppid ... (starttime is field 22).
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      /* another user's process, or gone */
    }
    return { pid, ppid: Number(rest[1]), state: rest[0]!, startTicks: Number(rest[19]), cmdline, cwd };
  } catch {
    return undefined; // gone meanwhile
  }
}

function allProcesses(): ProcInfo[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map((e) => procInfo(Number(e)))
    .filter((p): p is ProcInfo => p !== undefined);
}

/** Pids below `root` in the process tree (vitest's workers and whatever they still run). */
function descendantsOf(root: number, all: ProcInfo[]): Set<number> {
  const found = new Set<number>([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all)
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.add(p.pid);
        grew = true;
      }
  }
  found.delete(root);
  return found;
}

/**
 * Still below this run, or re-parented to init from this checkout since the run began. (Not any
 * process naming the checkout: a concurrent run elsewhere may share its node_modules.)
 */
function isLeftover(p: ProcInfo, since: number, below: Set<number>): boolean {
  if (p.cmdline.includes('/vitest/') || p.cmdline === '') return false; // a worker, or a zombie
  if (below.has(p.pid)) return true;
  return p.ppid === 1 && p.startTicks > since && (p.cmdline.includes(ROOT) || p.cwd === ROOT);
}

let setupTicks = 0;

export function setup(): void {
  setupTicks = procInfo(process.pid)?.startTicks ?? 0;
}

/** An upstream orphaned as its worker exited reads EOF and exits by itself: this long, before it counts as left. */
const GRACE_MS = 3000;

export async function teardown(): Promise<void> {
  const all = allProcesses();
  const below = descendantsOf(process.pid, all);
  let left = all.filter((p) => isLeftover(p, setupTicks, below));
  for (const end = Date.now() + GRACE_MS; left.length > 0 && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 100));
    left = left.filter((p) => procInfo(p.pid)?.startTicks === p.startTicks);
  }
  for (const p of left) {
    process.stderr.write(
      `leftover process ${GRACE_MS / 1000} s after the run: pid ${p.pid} ppid ${p.ppid} state ${p.state}: ` +
        `${p.cmdline.slice(0, 200)}; SIGKILL\n`,
    );
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* exited meanwhile */
    }
  }
}
