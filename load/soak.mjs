// @ts-check
// Soak: a long, bounded run that asks one question — does the gateway's memory stay flat?
// 1,000,000 requests (SOAK_CALLS) at c=50 through a shared stdio pool, memory store: 9 in 10 are
// tools/call echo__echo on 50 sessions, 1 in 10 is hostile (an invented method name never sent
// before, `_meta` that is a string, arguments of the wrong type, a forged session id, a body
// nested past the depth limit), so that anything the hostile ones leave behind accumulates.
// Beside that load, the hostile clients of load/lib/hostile.mjs run in loops the whole time
// (issue 27's vectors: SSE clients that stop reading, GETs reset before their stream opens, task
// calls with 1 MB arguments, unanswered elicitations, session churn, 3.5 MB calls), with sessions
// in Redis (a throwaway redis-server on a free port). Every reply of theirs must be a result, a
// typed error or a stream the gateway cut off.
// The gateway's RSS is sampled every second. "Flat": after warm-up (the first SOAK_WARMUP_PCT %
// of the requests, default 10), the median of the last fifth of the samples is at most 10 %
// above the median of the first fifth (what a leak moves). The peak is reported beside it: the
// hostile clients' megabyte bodies make RSS swing by a few hundred MB while they are in flight,
// so one sample says little; without them (SOAK_HOSTILE=none) the peak stays within 10 % too.
//
//   npm run build && node load/soak.mjs   # ~15 min on 2 cores with the hostile clients, 2 without; not in CI
//
// SOAK_CALLS (1000000), SOAK_CONNECTIONS (50), SOAK_MAX_SECONDS (1500: the run stops then, even
// short of SOAK_CALLS), SOAK_WARMUP_PCT (10), SOAK_HOSTILE (the vectors, comma-separated: all of
// them by default; `none` for the plain soak), SOAK_STORE (redis; or memory). Writes
// load/results/<date>-soak.md and .json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { DEFAULT_POOL, ROOT, startGateway } from './lib/gateway.mjs';
import { HOSTILE_UPSTREAMS, VECTORS, startHostile } from './lib/hostile.mjs';
import { POST_HEADERS, openSessions, sessionHeaders, toolsCallBody } from './lib/mcp.mjs';
import { killAllNow, rssKb, startRedisServer, stopAll } from './lib/processes.mjs';

const CALLS = Number(process.env.SOAK_CALLS ?? 1_000_000);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 50);
const MAX_SECONDS = Number(process.env.SOAK_MAX_SECONDS ?? 1500);
const WARMUP_PCT = Number(process.env.SOAK_WARMUP_PCT ?? 10);
const FLAT_PCT = 10;
const VECTOR_NAMES =
  process.env.SOAK_HOSTILE === 'none' ? [] : (process.env.SOAK_HOSTILE?.split(',') ?? Object.keys(VECTORS));
const STORE = process.env.SOAK_STORE ?? 'redis';

const log = (/** @type {string} */ msg) => process.stderr.write(`soak: ${msg}\n`);

/** The hostile tenth, in turn. */
const HOSTILE = [
  (/** @type {number} */ id) => JSON.stringify({ jsonrpc: '2.0', id, method: `invented/${id}/${'x'.repeat(64)}` }),
  (/** @type {number} */ id) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'echo__echo', arguments: { text: 'x' }, _meta: 'x' },
    }),
  (/** @type {number} */ id) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'echo__add', arguments: { a: 'one', b: 2 } },
    }),
  (/** @type {number} */ id) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":"x","deep":${'['.repeat(200)}${']'.repeat(200)}}}}`,
];

async function main() {
  const redis = STORE === 'redis' ? await startRedisServer() : undefined;
  const sessions = redis ? { store: 'redis', redisUrl: redis.url, ttlSeconds: 3600 } : undefined;
  const gw = await startGateway({ upstreams: HOSTILE_UPSTREAMS, sessions });
  const hostile = startHostile(gw, VECTOR_NAMES);
  /** @type {Array<{ t: number, requests: number, rssKb: number }>} */
  const samples = [];
  let done = 0;
  let sampler;
  try {
    const sids = await openSessions(gw.url, 50);
    const path = new URL(gw.url).pathname;
    let id = 1;
    let k = 0;
    const counts = { ok: 0, refused: 0, bad: 0 };
    const started = Date.now();
    sampler = setInterval(() => {
      samples.push({ t: (Date.now() - started) / 1000, requests: done, rssKb: rssKb(gw.pid) });
      if (samples.length % 10 === 0)
        log(`${samples.length} s: ${done} requests, RSS ${(rssKb(gw.pid) / 1024).toFixed(0)} MB`);
    }, 1000);
    log(`gateway pid ${gw.pid}: ${CALLS} requests at c=${CONNECTIONS}, at most ${MAX_SECONDS} s`);
    const instance = autocannon({
      url: gw.url,
      connections: CONNECTIONS,
      amount: CALLS,
      duration: MAX_SECONDS,
      requests: [
        {
          method: 'POST',
          path,
          headers: POST_HEADERS,
          setupRequest: (/** @type {any} */ req) => {
            const n = id++;
            const sid = /** @type {string} */ (sids[k++ % sids.length]);
            if (n % 10 !== 0)
              return { ...req, headers: sessionHeaders(sid), body: toolsCallBody(n, 'echo__echo', { text: 'soak' }) };
            const hostile = (n / 10) % (HOSTILE.length + 1);
            const headers = hostile === HOSTILE.length ? sessionHeaders(`forged-${n}`) : sessionHeaders(sid);
            return {
              ...req,
              headers,
              body: hostile === HOSTILE.length ? toolsCallBody(n, 'echo__echo', { text: 'x' }) : HOSTILE[hostile](n),
            };
          },
          onResponse: (/** @type {number} */ status, /** @type {string} */ body) => {
            done++;
            if (status === 200 && body.includes('"result"')) counts.ok++;
            else if ((status === 200 || status === 400 || status === 404) && body.includes('"error"')) counts.refused++;
            else counts.bad++;
          },
        },
      ],
    });
    const onSignal = () => instance.stop();
    process.once('SIGINT', onSignal);
    // autocannon ignores `duration` when it has an `amount`: the bound in time is ours.
    const bound = setTimeout(() => {
      log(`${MAX_SECONDS} s are up: stopping at ${done} requests`);
      instance.stop();
    }, MAX_SECONDS * 1000);
    const result = await instance;
    clearTimeout(bound);
    process.off('SIGINT', onSignal);
    log(`${done} requests answered; stopping the hostile clients`);
    const { tallies, cutOff } = await hostile.stop();
    clearInterval(sampler);
    samples.push({ t: (Date.now() - started) / 1000, requests: done, rssKb: rssKb(gw.pid) });
    const scrape = await (await fetch(`${gw.base}/metrics`)).text();
    const series = scrape.split('\n').filter((l) => l.startsWith('mcp_server_operation_duration_seconds_count')).length;
    report({ result, samples, counts, tallies, cutOff, seriesCount: series, seconds: (Date.now() - started) / 1000 });
  } finally {
    clearInterval(sampler);
    await hostile.stop();
    await gw.stop();
    await redis?.proc.stop();
    await stopAll();
  }
}

/**
 * @param {{ result: any, samples: Array<{ t: number, requests: number, rssKb: number }>, counts: Record<string, number>, tallies: Record<string, import('./lib/hostile.mjs').Tally>, cutOff: Record<string, number>, seriesCount: number | undefined, seconds: number }} r
 */
function report({ result, samples, counts, tallies, cutOff, seriesCount, seconds }) {
  const total = counts.ok + counts.refused + counts.bad;
  const warm = samples.filter((s) => s.requests >= (total * WARMUP_PCT) / 100);
  const base = warm[0]?.rssKb ?? 0;
  const peak = Math.max(...warm.map((s) => s.rssKb));
  const end = warm.at(-1)?.rssKb ?? 0;
  const peakPct = base ? ((peak - base) / base) * 100 : NaN;
  const fifth = Math.max(1, Math.floor(warm.length / 5));
  const firstMedian = median(warm.slice(0, fifth).map((s) => s.rssKb));
  const lastMedian = median(warm.slice(-fifth).map((s) => s.rssKb));
  const growthPct = firstMedian ? ((lastMedian - firstMedian) / firstMedian) * 100 : NaN;
  const flat = growthPct <= FLAT_PCT;
  const hostileUntyped = Object.values(tallies).reduce((n, t) => n + t.untyped, 0);
  const summary = {
    date: new Date().toISOString(),
    requests: total,
    seconds: Math.round(seconds),
    reqPerSec: Math.round(total / seconds),
    ...counts,
    errors: result.errors,
    timeouts: result.timeouts,
    rssKb: { afterWarmup: base, peak, end, firstFifthMedian: firstMedian, lastFifthMedian: lastMedian },
    growthPct: Math.round(growthPct * 10) / 10,
    peakPct: Math.round(peakPct * 10) / 10,
    flat,
    store: STORE,
    hostile: tallies,
    cutOff,
    operationSeries: seriesCount,
    samples,
  };
  const day = summary.date.slice(0, 10);
  const dir = join(ROOT, 'load/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${day}-soak.json`), `${JSON.stringify(summary, null, 2)}\n`);
  const mb = (/** @type {number} */ kb) => (kb / 1024).toFixed(1);
  const md = [
    `# Soak ${day}`,
    '',
    `\`node load/soak.mjs\`: ${total.toLocaleString('en')} requests in ${summary.seconds} s (${summary.reqPerSec} req/s), c=${CONNECTIONS}, echo on a shared stdio pool ${poolOf(HOSTILE_UPSTREAMS)}, ${STORE} store.`,
    '9 in 10 are tools/call echo__echo; 1 in 10 hostile (invented method names, `_meta` a string, wrong argument types, nesting past the limit, forged session ids).',
    '',
    '| answered with a result | refused with a typed error | anything else | socket errors | timeouts |',
    '|---|---|---|---|---|',
    `| ${counts.ok} | ${counts.refused} | ${counts.bad} | ${result.errors} | ${result.timeouts} |`,
    '',
    `Hostile clients in loops beside it (load/lib/hostile.mjs): ${VECTOR_NAMES.length ? VECTOR_NAMES.join(', ') : 'none'}.`,
    '',
    '| vector | replies | typed | untyped | first untyped |',
    '|---|---|---|---|---|',
    ...Object.entries(tallies).map(
      ([n, t]) =>
        `| ${n} | ${t.sent} | ${t.typed} | ${t.untyped} | ${(t.samples[0] ?? '').replace(/[|\n]/g, ' ').slice(0, 120)} |`,
    ),
    '',
    `Streams the gateway cut off (mcpgw_streams_cut_off_total): ${
      Object.entries(cutOff)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    }.`,
    '',
    `Gateway RSS after warm-up (${WARMUP_PCT} % of the requests): ${mb(base)} MB; peak after it ${mb(peak)} MB (${summary.peakPct} % over the first reading); at the end ${mb(end)} MB.`,
    `Median of the last fifth of the readings over that of the first fifth (${mb(firstMedian)} MB → ${mb(lastMedian)} MB): **${summary.growthPct} %** (flat means at most ${FLAT_PCT} %): **${flat ? 'flat' : 'NOT flat'}**.`,
    `Series of mcp_server_operation_duration_seconds_count at the end: ${seriesCount ?? 'unknown'} (invented method names share one).`,
    '',
    '| s | requests | RSS MB |',
    '|---|---|---|',
    ...samples
      .filter((_, i) => i % 10 === 0 || i === samples.length - 1)
      .map((s) => `| ${s.t.toFixed(0)} | ${s.requests} | ${mb(s.rssKb)} |`),
    '',
  ].join('\n');
  writeFileSync(join(dir, `${day}-soak.md`), md);
  process.stdout.write(`${md}\n`);
  if (!flat || counts.bad > 0 || hostileUntyped > 0) process.exitCode = 1;
}

/** @param {number[]} xs */
function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** The echo upstream's pool as the run used it, e.g. "1-4 x 32". @param {Array<{ name: string, pool?: { min?: number, max: number, maxInFlight: number } }>} list */
function poolOf(list) {
  const pool = list.find((u) => u.name === 'echo')?.pool ?? DEFAULT_POOL;
  return `${pool.min ?? pool.max}-${pool.max} x ${pool.maxInFlight}`;
}

process.once('SIGTERM', () => {
  killAllNow();
  process.exit(143);
});
main().catch(async (err) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  await stopAll();
  process.exit(1);
});
