// @ts-check
// The hostile clients of load/lib/hostile.mjs in a process of their own. Beside autocannon they
// must not share its event loop: building and parsing megabyte bodies in the bench process stalls
// autocannon's own timers, and the legitimate calls' latency then measures the load generator,
// not the gateway (seen: the gateway 67 % idle while the legitimate p50 was 24 ms). Run as a
// script, this file is that process: it plays the vectors until its stdin closes, then prints
// the tallies as one JSON line on stdout.
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { start } from './processes.mjs';

const SELF = fileURLToPath(import.meta.url);
/**
 * Where the hostile clients connect from: another loopback address than the legitimate ones,
 * so that a gateway bounding each client by its address (no auth) can tell them apart, as it
 * could tell two hosts apart.
 */
export const HOSTILE_ADDRESS = '127.0.0.2';
/**
 * The hostile clients' own work (building megabyte bodies, reading replies) is an attacker's, on
 * its own machine; here it shares the gateway's 2 cores, so it runs at this niceness (19 by
 * default, BENCH_HOSTILE_NICE; 0: as the gateway) and takes only CPU the gateway side leaves.
 * What the gateway and its upstreams do for the hostile requests runs at normal priority.
 */
const HOSTILE_NICE = Number(process.env.BENCH_HOSTILE_NICE ?? 19);

/**
 * Starts the vectors (all, or those named) in a child process; `stop()` ends them and returns
 * what `startHostile(...).stop()` returns. `pid` is there to meter the process.
 * @param {{ base: string, url: string }} gw @param {string[]} [names]
 */
export async function startHostileProcess(gw, names, localAddress = HOSTILE_ADDRESS) {
  const { proc } = await start({
    name: 'hostile clients',
    command: process.execPath,
    args: [SELF, gw.base, gw.url, (names ?? []).join(',')],
    stdin: true,
    rawStdout: true,
    ready: /^hostile: started/,
    env: { HOSTILE_LOCAL_ADDRESS: localAddress },
  });
  if (HOSTILE_NICE !== 0 && proc.pid !== undefined) setPriority(proc.pid, HOSTILE_NICE);
  let out = '';
  proc.child.stdout?.on('data', (/** @type {Buffer} */ chunk) => (out += chunk.toString('utf8')));
  return {
    pid: proc.pid,
    nice: HOSTILE_NICE,
    /** @returns {Promise<{ tallies: Record<string, import('./hostile.mjs').Tally>, cutOff: Record<string, number> }>} */
    async stop() {
      proc.child.stdin?.end();
      const code = await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 60_000, 'timeout'))]);
      if (code !== 0) {
        await proc.stop();
        throw new Error(`the hostile clients did not end cleanly (${String(code)}); output:\n${proc.output()}`);
      }
      return JSON.parse(out.trim().split('\n').at(-1) ?? '{}');
    },
  };
}

if (process.argv[1] === SELF) {
  const [base, url, names] = process.argv.slice(2);
  if (process.env.HOSTILE_LOCAL_ADDRESS) {
    // Every fetch of the vectors from that address too (undici's dispatcher is the one Node's fetch uses).
    const { Agent, setGlobalDispatcher } = await import('undici');
    setGlobalDispatcher(new Agent({ localAddress: process.env.HOSTILE_LOCAL_ADDRESS }));
  }
  const { startHostile } = await import('./hostile.mjs');
  const hostile = startHostile({ base, url }, names ? names.split(',') : undefined);
  process.stderr.write('hostile: started\n');
  process.stdin.resume();
  process.stdin.once('end', async () => {
    const ended = await hostile.stop();
    process.stdout.write(`${JSON.stringify(ended)}\n`);
    process.exit(0);
  });
}
