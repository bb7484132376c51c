// The guardrails' scanners on 1 MB adversarial inputs (long runs of near-matches for each
// detector): the time of one scan, against the bound of 50 ms per input. Not a unit
// test (no timed assertion there): run by hand or from the bench, on a quiet machine. Each row
// gives the wall time and the CPU time of the slowest of three scans: on a shared machine the
// wall time includes waits for a core, and the load average printed first says how shared it was.
//   npm run build && node load/guardrails/linear-time.mjs
import { availableParallelism, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { builtinInterceptor } from '../../dist/guardrails/builtin-interceptors.js';

const MB = 1 << 20;
const fill = (unit) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
const INPUTS = {
  secrets: [
    'AKIA',
    'AKIAAAAAAAAAAAAAAAA',
    'ghp_',
    'glpat-',
    'xoxb-',
    'AIza',
    'eyJ',
    'eyJa.',
    'eyJaaaaaaaaaaa.eyJ',
    '-----BEGIN ',
    '-----BEGIN RSA PRIVATE KEY-----',
    '://',
    'a://b:',
    'password',
    'password=',
    'password: "',
    'token=a',
    // Dense in the first letters of prefixes and key names: a search per prefix would crawl.
    'A',
    'Ag ',
    'pa',
  ],
  pii: ['@', 'a@', 'a@b.', 'a@b-', '4', '4 ', '4-', '+1 ', '(555) ', '555.', 'GB82', 'GB82 ', 'GB82WEST', 'G '],
  size: ['x', 'é'],
};
const BOUND_MS = 50;
// A collection before each input: the garbage of the inputs before it (1 MiB texts) is not its cost.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc');

/** CPU milliseconds (user and system) of this process since `from`. */
const cpuMs = (from) => {
  const c = process.cpuUsage(from);
  return (c.user + c.system) / 1000;
};

/** The machine's pace in the same run: one pass of a character-class test over 1 MiB (CPU ms). */
function onePass() {
  const text = fill('4 ');
  let best = Infinity;
  for (let r = 0; r < 5; r++) {
    const c0 = process.cpuUsage();
    let n = 0;
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 52) n++;
    best = Math.min(best, cpuMs(c0));
    if (n === 0) throw new Error('unreachable');
  }
  return best;
}
const pass = onePass();
let worst = 0;
let worstCpu = 0;
const [load1] = loadavg();
console.log(`load average ${load1.toFixed(2)} on ${availableParallelism()} cores`);
console.log(`one plain pass over 1 MiB: ${pass.toFixed(1)} ms of CPU (the scale: each row also in passes)\n`);
console.log('| interceptor | input (1 MiB of) | ms | CPU ms | passes | verdict |\n|---|---|---|---|---|---|');
for (const [name, units] of Object.entries(INPUTS)) {
  const interceptor = builtinInterceptor({ name, action: 'redact', mode: 'on', maxBytes: 4096 });
  for (const unit of units) {
    const value = { content: [{ type: 'text', text: fill(unit) }] };
    collect();
    // Warm the JIT on this input: a scanner's first runs on a new input are compiled, not measured.
    for (let w = 0; w < 5; w++) interceptor.run(value, 'response');
    const times = [];
    const cpu = [];
    for (let i = 0; i < 3; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const out = interceptor.run(value, 'response');
      times.push(performance.now() - t0);
      cpu.push(cpuMs(c0));
      if (i === 0) var verdict = out.verdict;
    }
    const ms = Math.max(...times);
    const cpuWorst = Math.max(...cpu);
    worst = Math.max(worst, ms);
    worstCpu = Math.max(worstCpu, cpuWorst);
    const row = [name, `\`${JSON.stringify(unit)}\``, ms.toFixed(1), cpuWorst.toFixed(1), (cpuWorst / pass).toFixed(0)];
    console.log(`| ${row.join(' | ')} | ${verdict} |`);
  }
}
console.log(
  `\nworst ${worst.toFixed(1)} ms (${worstCpu.toFixed(1)} ms of CPU): ${worst <= BOUND_MS ? 'pass' : 'FAIL'} ` +
    `(bound ${BOUND_MS} ms per 1 MiB input)`,
);
process.exitCode = worst <= BOUND_MS ? 0 : 1;
