// @ts-check
// Summaries of the scale scenarios (issue 34): added-latency (what the gateway adds to one call at
// c=1, per hop), payloads (MB/s against the floor, RSS per byte in flight), many-upstreams,
// connections and sessions-scale (CPU per call as sessions pile up).

/** @param {number} ms */
const us = (ms) => `${Math.round(ms * 1000)} µs`;
/** A difference with its sign: +12 µs, -3 µs. @param {number} ms */
const delta = (ms) => `${ms < 0 ? '-' : '+'}${us(Math.abs(ms))}`;

/**
 * Lines for the report: each gateway row of added-latency against the direct row of its hop.
 * @param {any[]} rows
 * @returns {string[]}
 */
export function addedLatencyLines(rows) {
  const mine = rows.filter((r) => r.scenario === 'added-latency' && !r.skipped);
  const direct = new Map(mine.filter((r) => r.variant === 'direct').map((r) => [r.extra?.path, r]));
  const floors = new Map(mine.filter((r) => r.target === 'fastify + one hop').map((r) => [r.extra?.path, r]));
  const out = [];
  for (const r of mine) {
    const base = direct.get(r.extra?.path);
    if (r.variant === 'direct' || !base) continue;
    const p50 = r.latencyMs.p50 - base.latencyMs.p50;
    const p99 = r.latencyMs.p99 - base.latencyMs.p99;
    const isFloor = r.target === 'fastify + one hop';
    const aim = r.extra?.path === 'stdio' && !isFloor ? ` (aim ≤ 100 µs: ${p50 <= 0.1 ? 'met' : 'not met'})` : '';
    // The gateway's own part: its row over the floor of the same hop (any relay in Node pays the floor's).
    const floor = isFloor ? undefined : floors.get(r.extra?.path);
    const overFloor = floor
      ? `; over the relay floor (${delta(floor.latencyMs.p50 - base.latencyMs.p50)} p50): ` +
        `**${delta(r.latencyMs.p50 - floor.latencyMs.p50)}** p50, ${delta(r.latencyMs.p99 - floor.latencyMs.p99)} p99`
      : '';
    out.push(
      `- ${r.variant}: p50 ${us(r.latencyMs.p50)} vs ${us(base.latencyMs.p50)} direct, **+${us(p50)}**${aim}; ` +
        `p99 ${us(r.latencyMs.p99)} vs ${us(base.latencyMs.p99)}, +${us(p99)}${overFloor}; ` +
        `${r.bad + base.bad} bad replies.`,
    );
  }
  return out.length === 0
    ? []
    : ['', '**added-latency** (c=1, one call after another, timed with hrtime):', '', ...out];
}

/**
 * Lines for the report: each payload size's gateway row against the floor's.
 * @param {any[]} rows
 * @returns {string[]}
 */
export function payloadLines(rows) {
  const out = [];
  for (const r of rows.filter((x) => x.scenario === 'payloads' && x.target === 'mcp-gateway' && !x.skipped)) {
    const e = r.extra ?? {};
    out.push(
      `- ${r.variant}: ${e.mbPerSec?.toFixed(1)} MB/s of results, ${e.vsFloor?.toFixed(2)}× the floor's; RSS growth ` +
        `${e.rssGrowthPerByteInFlight?.toFixed(2)}× the bytes in flight (aim ≤ 2×: ${e.memoryAim}); ${r.bad} bad replies.`,
    );
  }
  return out.length === 0
    ? []
    : ['', '**payloads** (gateway against the stdio relay floor, same size, same run):', '', ...out];
}

/**
 * Lines for the report: the many-upstreams row's start-up and first list.
 * @param {any[]} rows
 * @returns {string[]}
 */
export function manyUpstreamsLines(rows) {
  const r = rows.find((x) => x.scenario === 'many-upstreams' && !x.skipped);
  if (!r) return [];
  const e = r.extra;
  const list = (/** @type {any} */ l) =>
    `${l.ms.toFixed(1)} ms (${l.tools} of ${e.expectedTools} tools, ${l.pages} pages)`;
  return [
    '',
    `**many-upstreams** (${e.upstreams} stdio upstreams, ${e.slow} answering tools/list after ${e.slowMs} ms): spawn to ready ` +
      `${(e.spawnToReadyMs / 1000).toFixed(2)} s; a new session's first tools/list ${list(e.firstList)}, the next ` +
      `${list(e.secondList)}; calls at c=10 ${Math.round(r.reqPerSec)} req/s, p99 ${r.latencyMs.p99} ms, ${r.bad} bad.`,
  ];
}

/**
 * Lines for the report: connections per step, and sessions-scale's CPU per call against its first step per store.
 * @param {any[]} rows
 * @returns {string[]}
 */
export function stepLines(rows) {
  const out = [];
  const conn = rows.filter((r) => r.scenario === 'connections' && !r.skipped);
  if (conn.length > 0)
    out.push(
      '',
      `**connections**: ${conn
        .map(
          (r) => `${r.variant} ${Math.round(r.reqPerSec)} req/s, p99 ${r.latencyMs.p99} ms, ${r.errors + r.bad} errors`,
        )
        .join('; ')}.`,
    );
  const scale = rows.filter((r) => r.scenario === 'sessions-scale' && !r.skipped);
  for (const store of new Set(scale.map((r) => r.extra.store))) {
    const mine = scale.filter((r) => r.extra.store === store);
    const first = mine[0]?.cpuUsPerReq;
    // Paired within each round where the scenario says so (its steps measured side by side); else against the first row.
    /** @param {any} r */
    const ratio = (r) => r.extra.ratioToFirst ?? (first ? r.cpuUsPerReq / first : 1);
    const cells = mine.map((r) => {
      const vs = ` (${((ratio(r) - 1) * 100).toFixed(0)} %)`;
      const redis =
        r.extra.redisBytesPerSession === undefined
          ? ''
          : `, Redis ${Math.round(r.extra.redisBytesPerSession)} B/session`;
      return `${r.extra.sessionsOpen} open: ${r.cpuUsPerReq?.toFixed(0)} µs/call${vs}${redis}`;
    });
    const worst = Math.max(...mine.map((r) => Math.abs(ratio(r) - 1)));
    const paired = mine.some((r) => r.extra.ratioToFirst !== undefined)
      ? ` (each step's median over ${mine[0].extra.ratioToFirstRounds.length} interleaved rounds of its ratio to the first` +
        ` in the same round; per round: ${mine
          .slice(1)
          .map((r) => `${r.extra.sessionsOpen} ${r.extra.ratioToFirstRounds.map((x) => x.toFixed(2)).join('/')}`)
          .join(', ')})`
      : '';
    out.push(
      '',
      `**sessions-scale, ${store}**: ${cells.join('; ')}; flat within 10 %: ${worst <= 0.1 ? 'pass' : 'fail'}${paired}.`,
    );
  }
  return out;
}
