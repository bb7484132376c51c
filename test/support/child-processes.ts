import { readFileSync, readdirSync } from 'node:fs';

/** Pids (ascending) of this test process's own children whose command line contains `script`, read from /proc. */
export function childPidsRunning(script: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(script)) pids.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids.sort((a, b) => a - b);
}
