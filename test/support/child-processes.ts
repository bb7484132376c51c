import { readFileSync, readdirSync } from 'node:fs';

/** Direct children of a process (from /proc), e.g. a gateway's upstream workers. */
export function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) kids.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return kids;
}

/** Pids (ascending) of this test process's own children whose command line contains `script`. */
export function childPidsRunning(script: string): number[] {
  return childrenOf(process.pid)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(script);
      } catch {
        return false; // gone meanwhile
      }
    })
    .sort((a, b) => a - b);
}
