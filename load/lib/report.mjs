// @ts-check
// The benchmark report: ratios against the baselines, load/results/<name>.md and .json, and a
// compact table on stdout.

import { addedLatencyLines, manyUpstreamsLines, payloadLines, stepLines } from './scale-report.mjs';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { ALLOCATOR } from './gateway.mjs';
import { openFilesLimit } from './processes.mjs';

/** Scenarios with their own baseline row beside each gateway row (see scale-report.mjs). */
const OWN_BASELINE = new Set(['added-latency', 'payloads']);

/** @typedef {Record<string, any>} Row */

export function machine() {
  const nproc = Number(spawnSync('nproc', { encoding: 'utf8' }).stdout?.trim()) || availableParallelism();
  let loadavg = '';
  try {
    loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    /* not Linux */
  }
  return {
    nproc,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memTotalMb: Math.round(totalmem() / 2 ** 20),
    node: process.version,
    allocator: ALLOCATOR,
    kernel: `${process.platform} ${release()}`,
    ulimitN: openFilesLimit(),
    loadavgAtStart: loadavg,
  };
}

/**
 * Adds ratio columns in place: gateway/bare-fastify req/s, gateway/best-peer req/s (the
 * tools/call echo rows only: the peers ran that load), p99/bare-fastify p99, and the share of the
 * upstream's own ceiling.
 * @param {Row[]} rows
 */
export function addRatios(rows) {
  const measured = rows.filter((r) => typeof r.reqPerSec === 'number' && !r.skipped);
  const bare = measured.find((r) => r.scenario === 'bare-fastify');
  const upstream = measured.find((r) => r.scenario === 'upstream-direct');
  const peers = measured.filter((r) => r.scenario === 'peers');
  const floors = measured.filter((r) => r.scenario === 'relay-floor');
  /** The relay floor with the same hop as `r` (HTTP upstream or stdio), for the gateway's call rows. @param {Row} r */
  const floorOf = (r) => {
    if (r.target !== 'mcp-gateway' || !/echo/.test(r.workload ?? '')) return undefined;
    const hop = /HTTP upstream/.test(r.variant ?? '')
      ? 'HTTP upstream'
      : /cacheMs 0/.test(r.variant ?? '')
        ? 'Redis GET'
        : 'stdio';
    return floors.find((f) => (hop === 'stdio' ? f.variant === 'stdio' : (f.variant ?? '').includes(hop)));
  };
  const bestPeer = peers.reduce(
    (/** @type {Row | undefined} */ best, r) => (!best || r.reqPerSec > best.reqPerSec ? r : best),
    undefined,
  );
  for (const r of measured) {
    // On a saturated 2-core machine req/s depends on who gets the cores; CPU per request does not.
    const p = gatewayProc(r) ?? r.procs?.upstream;
    r.cpuUsPerReq = p && r.reqPerSec > 0 ? ((p.cpuPct / 100) * 1e6) / r.reqPerSec : undefined;
    // Older result files have no syscall counts.
    r.syscallsPerReq = p?.syscalls !== undefined && r.completed > 0 ? p.syscalls / r.completed : undefined;
  }
  for (const r of measured) {
    // These scenarios measure their own baseline beside each row, at their own load: no ratio to the others'.
    if (OWN_BASELINE.has(r.scenario)) {
      r.ratios = {};
      continue;
    }
    r.ratios = {
      vsBare: bare && r !== bare ? r.reqPerSec / bare.reqPerSec : undefined,
      p99VsBare: bare && r !== bare && bare.latencyMs.p99 > 0 ? r.latencyMs.p99 / bare.latencyMs.p99 : undefined,
      vsBestPeer:
        bestPeer && r.scenario !== 'peers' && /echo/.test(r.workload ?? '') && r.scenario !== 'session-churn'
          ? r.reqPerSec / bestPeer.reqPerSec
          : undefined,
      vsUpstream:
        upstream && r !== upstream && /echo|stdio/.test(r.workload ?? '')
          ? r.reqPerSec / upstream.reqPerSec
          : undefined,
      cpuPerReqVsBare:
        bare?.cpuUsPerReq && r !== bare && r.cpuUsPerReq !== undefined ? r.cpuUsPerReq / bare.cpuUsPerReq : undefined,
      cpuPerReqVsFloor: (() => {
        const floor = floorOf(r);
        return floor?.cpuUsPerReq && r.cpuUsPerReq !== undefined ? r.cpuUsPerReq / floor.cpuUsPerReq : undefined;
      })(),
    };
    // A scenario measured again on an earlier build (load/scenarios/before.mjs): this build over that one.
    // The twin of the same variant (call-redis has two): its variant is this one's plus ", before: <rev>".
    const before = measured.find(
      (b) =>
        b.scenario === `${r.scenario}@before` &&
        (b.variant ?? '').replace(/,? ?before: \S+$/, '') === (r.variant ?? ''),
    );
    if (before) {
      r.ratios.vsBefore = r.reqPerSec / before.reqPerSec;
      r.ratios.cpuVsBefore =
        r.cpuUsPerReq !== undefined && before.cpuUsPerReq ? r.cpuUsPerReq / before.cpuUsPerReq : undefined;
    }
  }
  return { bare, upstream, bestPeer };
}

/**
 * The middle item by `value` (of an even count, the lower middle): a median round's row, or a median ratio.
 * @template T
 * @param {T[]} items  not empty
 * @param {(item: T) => number} value
 * @returns {T}
 */
export function medianOf(items, value) {
  const sorted = [...items].sort((a, b) => value(a) - value(b));
  return /** @type {T} */ (sorted[Math.floor((sorted.length - 1) / 2)]);
}

/**
 * CPU per request over bare Fastify's, the floor's and the @before twin's, each taken within one
 * round (rows measured minutes apart, not rounds apart), then the median over the rounds: on a
 * machine whose speed drifts between rounds this is steadier than the ratio of two medians, which
 * may come from different rounds. Needs `roundRatios` (run.mjs keeps each round's `ratios`).
 * @param {Row[]} rows
 */
export function addPairedRatios(rows) {
  for (const r of rows) {
    const perRound = /** @type {Array<Record<string, number | undefined>> | undefined} */ (r.roundRatios);
    if (!perRound || perRound.length < 2) continue;
    /** @param {string} key */
    const paired = (key) => {
      const values = perRound.map((x) => x?.[key]).filter((v) => typeof v === 'number');
      return values.length === perRound.length ? { rounds: values, median: medianOf(values, (v) => v) } : undefined;
    };
    r.paired = {
      cpuVsBare: paired('cpuPerReqVsBare'),
      cpuVsFloor: paired('cpuPerReqVsFloor'),
      cpuVsBefore: paired('cpuVsBefore'),
    };
  }
}

/** @param {number | undefined} v @param {number} [digits] */
const num = (v, digits = 0) => (v === undefined || v === null || Number.isNaN(v) ? '—' : v.toFixed(digits));
/** @param {number | undefined} v */
// Not finite: the base was 0 (autocannon reports whole milliseconds at saturation, so a p50 can be 0.00).
const ratio = (v) => (v === undefined || !Number.isFinite(v) ? '—' : `${v.toFixed(2)}×`);
/** @param {number | undefined} v */
const ms = (v) => (v === undefined ? '—' : v < 10 ? v.toFixed(2) : v.toFixed(1));
/** @param {number | undefined} kb */
const mb = (kb) => (kb === undefined ? '—' : (kb / 1024).toFixed(0));

/** A change in RSS with its sign: the allocator can return more pages than new items take. */
function signedMb(/** @type {number} */ kb) {
  return `${kb < 0 ? '−' : '+'}${mb(Math.abs(kb))}`;
}

/** @param {Row} r */
function label(r) {
  return r.variant ? `${r.target} (${r.variant})` : r.target;
}

/** @param {Row} r */
function gatewayProc(r) {
  return r.procs?.gateway ?? r.procs?.server;
}

/** @param {Row} r */
function errorsCell(r) {
  return `${r.errors}/${r.non2xx}/${r.bad}`;
}

/** The compact table for stdout. @param {Row[]} rows */
export function textTable(rows) {
  const head = [
    'scenario',
    'target',
    'req/s',
    'p50',
    'p90',
    'p99 ms',
    'err/non2xx/bad',
    'proc CPU%',
    'up CPU%',
    'other%',
    'RSS MB',
    'µs/req',
    '×bare',
    '×peer',
    'p99/bare',
    'cpu÷bare',
    'cpu÷floor',
  ];
  /** @type {string[][]} */
  const body = [];
  for (const r of rows) {
    if (r.skipped) {
      body.push([r.scenario, r.target, 'skipped', '', '', '', '', '', '', '', '', '', '', '', '', '', '']);
      continue;
    }
    if (r.tasks) {
      const t = r.tasks;
      body.push([
        r.scenario,
        r.target,
        `${t.accepted}/${t.requested} tasks`,
        `${num(t.perTaskBytes)} B/task`,
        '',
        '',
        '',
        '',
        '',
        '',
        mb(t.withTasksKb),
        '',
        '',
        '',
        '',
        '',
        '',
      ]);
      continue;
    }
    if (r.idle) {
      const i = r.idle;
      body.push([
        r.scenario,
        r.target,
        `${num(i.perSessionBytes)} B/session`,
        `${num(i.perStreamBytes)} B/stream`,
        `return ${num(i.returnPct, 1)}%`,
        '',
        '',
        '',
        '',
        '',
        mb(i.afterStreamsKb),
        '',
        '',
        '',
        '',
        '',
        '',
      ]);
      continue;
    }
    const g = gatewayProc(r);
    body.push([
      r.scenario,
      label(r),
      num(r.reqPerSec),
      ms(r.latencyMs.p50),
      ms(r.latencyMs.p90),
      ms(r.latencyMs.p99),
      errorsCell(r),
      g ? num(g.cpuPct) : '—',
      r.procs?.upstream ? num(r.procs.upstream.cpuPct) : '—',
      num(r.otherCpuPct),
      g ? mb(g.rssKb) : r.procs?.upstream ? mb(r.procs.upstream.rssKb) : '—',
      num(r.cpuUsPerReq),
      ratio(r.ratios?.vsBare),
      ratio(r.ratios?.vsBestPeer),
      ratio(r.ratios?.p99VsBare),
      ratio(r.ratios?.cpuPerReqVsBare),
      ratio(r.ratios?.cpuPerReqVsFloor),
    ]);
  }
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (/** @type {string[]} */ cells) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/**
 * @param {object} o
 * @param {Row[]} o.rows
 * @param {Record<string, any>} o.meta
 * @param {Array<{ scenario: string, error: string }>} o.failures
 */
export function markdown({ rows, meta, failures }) {
  const m = meta.machine;
  const out = [];
  out.push(`# mcp-gateway benchmark — ${meta.date}`);
  out.push('');
  out.push(`Reproduce: \`${meta.command}\` (from the repository root; it builds first).`);
  out.push('');
  out.push(
    `Machine: ${m.nproc} cores (${m.cpuModel}), ${m.memTotalMb} MB, ${m.kernel}, Node ${m.node}, gateway allocator ${m.allocator ?? 'glibc'}, ulimit -n ${m.ulimitN}. ` +
      `Load average at start: ${m.loadavgAtStart}.`,
  );
  out.push(
    `Settings: ${meta.settings.duration} s per measurement after a ${meta.settings.warmup} s warm-up, ` +
      `${meta.settings.connections} connections, ${meta.settings.sessions} sessions round-robin, ` +
      `gateway pool ${meta.settings.pool} unless stated, logLevel warn. Started ${meta.startedAt}, took ${meta.tookSeconds} s.`,
  );
  out.push('');
  out.push(
    'The load generator (autocannon, in the bench process) runs on the same 2 cores as the process under test and its upstream ' +
      'workers, so every number here is "whole machine saturated" throughput, not the gateway alone.',
  );
  out.push('');
  out.push('## Throughput and latency');
  out.push('');
  if ((meta.settings.rounds ?? 1) > 1) {
    out.push(
      `Each throughput row is the median of ${meta.settings.rounds} rounds; the rounds ran one after another over the whole selection ` +
        '(not one scenario three times in a row), and every ratio compares medians. req/s of each round, in order:',
    );
    out.push('');
    for (const r of rows)
      if (r.rounds?.length > 1) out.push(`- ${r.scenario} ${label(r)}: ${r.rounds.map((v) => num(v)).join(', ')}`);
    out.push('');
  }
  const paired = rows.filter((r) => r.paired?.cpuVsBare);
  if (paired.length > 0) {
    out.push(
      'CPU per request, paired: each ratio taken within one round (the rows it compares ran minutes apart), then its median over the rounds. Each round in order, then the median:',
    );
    out.push('');
    out.push('| scenario | CPU/req ÷ bare | median | CPU/req ÷ floor | median | CPU/req ÷ @before | median |');
    out.push('|---|---|--:|---|--:|---|--:|');
    /** @param {{ rounds: number[], median: number } | undefined} p */
    const cells = (p) => (p ? `${p.rounds.map((v) => v.toFixed(2)).join(', ')} | ${ratio(p.median)}` : '— | —');
    for (const r of paired)
      out.push(
        `| ${r.scenario} ${label(r)} | ${cells(r.paired.cpuVsBare)} | ${cells(r.paired.cpuVsFloor)} | ${cells(r.paired.cpuVsBefore)} |`,
      );
    out.push('');
  }
  const twins = rows.filter((r) => r.ratios?.vsBefore !== undefined);
  if (twins.length > 0) {
    out.push(
      'Against the earlier build (`@before` rows, BENCH_COMPARE_ROOT), medians: ' +
        twins
          .map(
            (r) =>
              `${r.scenario}${r.variant ? ` (${r.variant})` : ''} ${ratio(r.ratios.vsBefore)} req/s, ${ratio(r.ratios.cpuVsBefore)} CPU/req`,
          )
          .join('; ') +
        '.',
    );
    out.push('');
  }
  out.push(
    '| scenario | target | workload | req/s (mean) | p50 ms | p90 ms | p99 ms | errors | non-2xx | bad replies | proc CPU % | proc RSS MB | upstream CPU % | upstream RSS MB | loadgen CPU % | other CPU % | proc CPU µs/req | proc syscalls/req | ×bare-fastify | ×best peer | ×upstream | p99 / bare p99 | CPU/req ÷ bare | CPU/req ÷ floor |',
  );
  out.push('|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    if (r.idle || r.tasks) continue;
    if (r.skipped) {
      out.push(
        `| ${r.scenario} | ${r.target} | ${r.workload ?? ''} | skipped | | | | | | | | | | | | | | | | | | | | |`,
      );
      continue;
    }
    const g = gatewayProc(r);
    const u = r.procs?.upstream;
    out.push(
      `| ${r.scenario} | ${label(r)} | ${r.workload ?? ''} | ${num(r.reqPerSec)} | ${ms(r.latencyMs.p50)} | ${ms(r.latencyMs.p90)} | ${ms(r.latencyMs.p99)} | ` +
        `${r.errors} | ${r.non2xx} | ${r.bad} | ${g ? num(g.cpuPct) : '—'} | ${g ? mb(g.rssKb) : '—'} | ` +
        `${u ? `${num(u.cpuPct)}${u.processes > 1 ? ` (${u.processes} procs)` : ''}` : '—'} | ${u ? mb(u.rssKb) : '—'} | ${num(r.loadgenCpuPct)} | ${num(r.otherCpuPct)}${r.attempts?.length > 1 ? ` (attempts: ${r.attempts.join(', ')})` : ''} | ${num(r.cpuUsPerReq)} | ${r.syscallsPerReq === undefined ? '—' : r.syscallsPerReq.toFixed(1)} | ` +
        `${ratio(r.ratios?.vsBare)} | ${ratio(r.ratios?.vsBestPeer)} | ${ratio(r.ratios?.vsUpstream)} | ${ratio(r.ratios?.p99VsBare)} | ${ratio(r.ratios?.cpuPerReqVsBare)} | ${ratio(r.ratios?.cpuPerReqVsFloor)} |`,
    );
  }
  out.push('');
  out.push(
    'req/s is autocannon\'s mean of per-second samples (upstream-direct: calls/s over the run). "proc" is the process under test ' +
      '(gateway, peer or bare Fastify); CPU is utime+stime from /proc/<pid>/stat over the measured run as % of one core; RSS is VmRSS at the end of the run. ' +
      '"upstream" sums the stdio server processes; "loadgen" is the bench process (autocannon); "other" is what the rest of the machine used ' +
      'during the run (/proc/stat busy minus all of ours): well above 0 means that row is depressed by foreign load ' +
      '(a run with more than BENCH_OTHER_MAX = 30 % is measured again, up to BENCH_RETRIES times, and the cleanest attempt kept). ' +
      '"bad replies" are replies that were not 2xx, carried a JSON-RPC error, had no result, ' +
      'or (SSE) did not carry the expected 10 progress notifications; a sample of replies (1 in 50) is also parsed and compared in full. ' +
      '×best peer compares with the faster of supergateway and mcp-proxy on the same tools/call echo load. ' +
      '"proc CPU µs/req" is the process under test\'s CPU time per request (upstream-direct: the echo server\'s); "proc syscalls/req" counts its read and write system calls per request (/proc/<pid>/io syscr + syscw); "CPU/req ÷ bare" ' +
      'compares it with bare Fastify: on a machine where the load generator and the upstreams share the cores, this is the steadier ' +
      'measure of what the gateway itself costs. "CPU/req ÷ floor" compares a gateway call row with the relay-floor row of the same hop ' +
      '(stdio, or HTTP upstream): bare Fastify plus that one hop and nothing else, so it is what the gateway adds to any relay.',
  );
  const memory = rows.find((r) => r.scenario === 'call-json' && !r.skipped);
  for (const redis of rows.filter((r) => r.scenario === 'call-redis' && !r.skipped)) {
    if (!memory) break;
    out.push(
      `**call-redis** (${redis.variant}): ${num(redis.reqPerSec)} req/s vs ${num(memory.reqPerSec)} req/s with the memory store in the same run: ` +
        `${ratio(redis.reqPerSec / memory.reqPerSec)} of the memory store (target ≥ 0.80×); p99 ${ms(redis.latencyMs.p99)} vs ${ms(memory.latencyMs.p99)} ms.`,
      '',
    );
  }
  const stateless = rows.find((r) => r.scenario === 'call-stateless' && !r.skipped);
  if (stateless && memory) {
    out.push(
      `**call-stateless**: ${num(stateless.reqPerSec)} req/s as 2026-07-28 stateless requests vs ${num(memory.reqPerSec)} req/s on 2025 sessions in the same run: ` +
        `${ratio(stateless.reqPerSec / memory.reqPerSec)}; p99 ${ms(stateless.latencyMs.p99)} vs ${ms(memory.latencyMs.p99)} ms.`,
      '',
    );
  }
  const churn = rows.find((r) => r.scenario === 'session-churn' && !r.skipped);
  if (churn) {
    out.push('');
    out.push(
      `**session-churn**: ${num(churn.sessionsPerSec)} sessions/s completed (initialize + initialized + tools/call + DELETE, 4 requests each; ` +
        `${churn.extra.sessionsDeleted} sessions in ${num(churn.seconds, 1)} s)` +
        (churn.procs?.gateway && churn.sessionsPerSec > 0
          ? `, i.e. ${ms((10 * churn.procs.gateway.cpuPct) / churn.sessionsPerSec)} ms of gateway CPU per session life.`
          : '.'),
    );
  }
  for (const pace of new Set(rows.filter((r) => r.scenario === 'hostile-mix').map((r) => r.variant.split(', ')[1]))) {
    const of = (/** @type {string} */ v) =>
      rows.find((r) => r.scenario === 'hostile-mix' && r.variant === `${v}, ${pace}` && !r.skipped);
    const alone = of('alone');
    const beside = of('beside hostile clients');
    if (!alone || !beside) continue;
    const tallies = Object.entries(beside.extra.hostile ?? {});
    const untyped = tallies.reduce((n, [, t]) => n + t.untyped, 0);
    out.push('');
    out.push(
      `**hostile-mix, ${pace}** (hostile clients at nice ${beside.extra.hostileNice ?? 0}): legitimate calls p50/p99 ${ms(alone.latencyMs.p50)}/${ms(alone.latencyMs.p99)} ms alone, ` +
        `${ms(beside.latencyMs.p50)}/${ms(beside.latencyMs.p99)} ms beside the hostile clients: p50 ${ratio(beside.latencyMs.p50 / alone.latencyMs.p50)}, ` +
        `p99 ${ratio(beside.latencyMs.p99 / alone.latencyMs.p99)} (aim ≤ 3×); ${beside.bad} bad legitimate replies; hostile replies: ` +
        `${tallies.map(([n, t]) => `${n} ${t.sent} (${t.untyped} untyped)`).join(', ')}; ${untyped} untyped in all; streams cut off: ` +
        `${
          Object.entries(beside.extra.cutOff ?? {})
            .map(([k, n]) => `${k} ${n}`)
            .join(', ') || 'none'
        }.`,
    );
  }
  const fairRows = rows.filter((r) => r.scenario === 'fairness' && !r.skipped);
  const fairAlone = fairRows.find((r) => r.variant === 'B alone');
  const fairOn = fairRows.find((r) => r.variant.endsWith('fairness on'));
  const fairOff = fairRows.find((r) => r.variant.endsWith('fairness off'));
  if (fairAlone && fairOn && fairOff) {
    const p = (/** @type {any} */ r) => `${ms(r.latencyMs.p50)}/${ms(r.latencyMs.p99)} ms`;
    const flood = (/** @type {any} */ r) =>
      `A's calls ${r.extra.floodA?.ok ?? 0} answered, ${r.extra.floodA?.refused ?? 0} refused, ${r.extra.floodA?.failed ?? 0} failed`;
    out.push('');
    out.push(
      `**fairness** (${fairAlone.workload}): B's p50/p99 ${p(fairAlone)} alone; beside A's flood with fairness on ` +
        `${p(fairOn)} (p99 ${ratio(fairOn.extra.latencyVsAlone.p99)} of alone, aim ≤ 2×; ${flood(fairOn)}); with fairness off ` +
        `${p(fairOff)} (p99 ${ratio(fairOff.extra.latencyVsAlone.p99)}; ${flood(fairOff)}); ` +
        `${fairAlone.bad + fairOn.bad + fairOff.bad} bad replies of B.`,
    );
  }
  out.push(...addedLatencyLines(rows), ...payloadLines(rows), ...manyUpstreamsLines(rows), ...stepLines(rows));
  const sse = rows.find((r) => r.scenario === 'call-sse-progress' && !r.skipped);
  if (sse) {
    out.push('');
    out.push(
      `**call-sse-progress**: ${num(sse.reqPerSec)} calls/s, each an SSE reply with 10 progress notifications + the result ` +
        `(≈ ${num(sse.reqPerSec * 11)} SSE events/s); ${sse.extra.progressSeen} progress events checked in ${sse.extra.checked} replies.`,
    );
  }
  const sweep = rows.filter((r) => r.scenario === 'pool-sweep' && !r.skipped);
  if (sweep.length > 0) {
    const best = sweep.reduce((a, b) => (b.reqPerSec > a.reqPerSec ? b : a));
    out.push('');
    out.push(
      `**pool-sweep** (call-json load, workers × maxInFlight): best on this machine is ${best.variant} at ${num(best.reqPerSec)} req/s ` +
        `(${sweep.map((r) => `${r.variant}: ${num(r.reqPerSec)} req/s, p99 ${ms(r.latencyMs.p99)} ms`).join('; ')}).`,
    );
  }

  const idle = rows.find((r) => r.idle);
  if (idle) {
    const i = idle.idle;
    const pass = (/** @type {boolean | undefined} */ p) => (p === undefined ? '—' : p ? 'pass' : 'FAIL');
    out.push('');
    out.push('## Idle sessions and streams (gateway RSS)');
    out.push('');
    out.push('| step | gateway RSS MB | delta | per item | target | |');
    out.push('|---|--:|--:|--:|--:|---|');
    out.push(
      `| baseline (after a warm-up of 1,000 sessions and 200 streams, all closed) | ${mb(i.baselineKb)} | | | | |`,
    );
    out.push(
      `| ${i.sessions} sessions open | ${mb(i.afterSessionsKb)} | ${signedMb(i.afterSessionsKb - i.baselineKb)} MB | ${num(i.perSessionBytes)} B/session | ≤ ${i.targets.sessionBytes} B | ${pass(i.pass.session)} |`,
    );
    out.push(
      `| + ${i.streams} GET streams open | ${mb(i.afterStreamsKb)} | ${signedMb(i.afterStreamsKb - i.afterSessionsKb)} MB | ${num(i.perStreamBytes)} B/stream | ≤ ${i.targets.streamBytes} B | ${pass(i.pass.stream)} |`,
    );
    out.push(`| streams closed | ${mb(i.afterStreamsClosedKb)} | | | | |`);
    out.push(
      `| sessions deleted (waited ${(i.returnWaitMs / 1000).toFixed(1)} s) | ${mb(i.afterCloseKb)} | ${num(i.returnPct, 1)} % vs baseline | | ≤ ${i.targets.returnPct} % | ${pass(i.pass.return)} |`,
    );
    out.push('');
    const h = i.heapUsedBytes ?? {};
    out.push(
      `V8 heap used (from /metrics): baseline ${mb(h.baseline / 1024)} MB, with sessions ${mb(h.afterSessions / 1024)} MB ` +
        `(${num(i.heapPerSessionBytes)} B/session), with streams ${mb(h.afterStreams / 1024)} MB (${num(i.heapPerStreamBytes)} B/stream), ` +
        `after close ${mb(h.afterClose / 1024)} MB` +
        (i.memory?.afterClose
          ? `; V8 heap committed (total) baseline ${mb(i.memory.baseline?.total / 1024)} → after close ${mb(i.memory.afterClose.total / 1024)} MB, ` +
            `external ${mb(i.memory.baseline?.external / 1024)} → ${mb(i.memory.afterClose.external / 1024)} MB`
          : '') +
        `. Sessions opened in ${(i.openSessionsMs / 1000).toFixed(1)} s, streams in ${(i.openStreamsMs / 1000).toFixed(1)} s; ` +
        `gateway counted ${i.activeSessions} sessions and ${i.streamsOpen} open streams.` +
        (idle.notes ? ` Note: ${idle.notes}.` : ''),
    );
    const f = i.fanOut;
    if (f)
      out.push(
        '',
        `One list_changed (a live reload) to ${f.streams} open GET streams: ${f.heard} heard it; first ${ms(f.firstMs)} ms, ` +
          `p50 ${ms(f.p50Ms)}, p99 ${ms(f.p99Ms)}, last ${ms(f.lastMs)} ms after the SIGHUP (aim: all within ` +
          `${f.aimMs} ms: ${pass(f.pass)}).`,
      );
  }

  const tasksRow = rows.find((r) => r.tasks);
  if (tasksRow) out.push(...tasksSection(tasksRow));

  const peerRows = rows.filter((r) => r.scenario === 'peers');
  if (peerRows.length > 0) {
    out.push('');
    out.push('## Peers');
    out.push('');
    for (const r of peerRows) {
      if (r.skipped) out.push(`- **${r.target}**: skipped — ${r.skipped}`);
      else out.push(`- **${r.target}** ${r.variant}: ${r.notes ?? ''}`);
    }
    out.push(
      '- Installed with `npm install --prefix load/.peers` (git-ignored), not project dependencies; each run with ' +
        '`node --require load/lib/loopback-only.cjs` so it listens on 127.0.0.1 only.',
    );
  }
  const bad = rows.filter((r) => r.extra?.badSamples);
  if (bad.length > 0) {
    out.push('');
    out.push('## Bad replies (first few)');
    out.push('');
    for (const r of bad)
      for (const s of r.extra.badSamples)
        out.push(`- ${r.scenario} / ${label(r)}: \`${String(s).replace(/\s+/g, ' ').slice(0, 200)}\``);
  }
  if (failures.length > 0) {
    out.push('');
    out.push('## Scenarios that failed');
    out.push('');
    for (const f of failures) out.push(`- **${f.scenario}**: ${f.error.replace(/\s+/g, ' ').slice(0, 500)}`);
  }
  out.push('');
  return out.join('\n');
}

/**
 * `base`, or `base-2`, `base-3`, … when a report of that name is in `dir` already: a second run
 * of the same selection on the same day must not overwrite the first (it may be committed and cited).
 * @param {string} dir
 * @param {string} base
 */
export function unusedName(dir, base) {
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    if (!existsSync(join(dir, `${name}.md`)) && !existsSync(join(dir, `${name}.json`))) return name;
  }
}

/**
 * @param {string} dir
 * @param {string} base   file name without extension
 * @param {object} o
 * @param {Row[]} o.rows
 * @param {Record<string, any>} o.meta
 * @param {Array<{ scenario: string, error: string }>} o.failures
 */
export function writeReport(dir, base, o) {
  mkdirSync(dir, { recursive: true });
  const md = join(dir, `${base}.md`);
  const json = join(dir, `${base}.json`);
  writeFileSync(md, markdown(o));
  writeFileSync(json, `${JSON.stringify({ ...o.meta, rows: o.rows, failures: o.failures }, null, 2)}\n`);
  return { md, json };
}

/**
 * The tasks-memory section: gateway RSS with the tasks running, per task, and the checks.
 * @param {Row} row
 */
function tasksSection(row) {
  const t = row.tasks;
  const pass = (/** @type {boolean | undefined} */ p) => (p === undefined ? '—' : p ? 'pass' : 'FAIL');
  const h = t.heapUsedBytes ?? {};
  return [
    '',
    '## Tasks at once (gateway RSS)',
    '',
    `${row.workload}.`,
    '',
    '| step | gateway RSS MB | delta | per task | target | |',
    '|---|--:|--:|--:|--:|---|',
    `| baseline (after 100 warm-up tasks, ended) | ${mb(t.baselineKb)} | | | | |`,
    `| ${t.accepted} of ${t.requested} tasks accepted, running (in ${(t.createTookMs / 1000).toFixed(1)} s) | ${mb(t.withTasksKb)} | ${signedMb(t.withTasksKb - t.baselineKb)} MB | ${num(t.perTaskBytes)} B/task | ≤ ${t.targets.taskBytes} B | ${pass(t.pass.perTask)} |`,
    `| all cancelled (${t.cancelAcked} acked in ${(t.cancelTookMs / 1000).toFixed(1)} s); records kept until their ttl | ${mb(t.afterCancelKb)} | ${signedMb(t.afterCancelKb - t.baselineKb)} MB | | | |`,
    '',
    `All accepted as tasks: ${pass(t.pass.allAccepted)}` +
      (Object.keys(t.rejected ?? {}).length > 0 ? ` (not accepted: ${JSON.stringify(t.rejected)})` : '') +
      `. A sample on tasks/get: ${JSON.stringify(t.sampleStatus)} (${pass(t.pass.stillWorking)}: all working). ` +
      `V8 heap used (from /metrics): ${mb(h.baseline / 1024)} → ${mb(h.withTasks / 1024)} MB (${num(t.heapPerTaskBytes)} B/task). ` +
      `Upstream worker RSS: ${mb(t.upstreamRssKb?.baseline)} → ${mb(t.upstreamRssKb?.withTasks)} MB.` +
      (row.notes ? ` Note: ${row.notes}.` : ''),
  ];
}
