// @ts-check
// Summaries of the scale scenarios (issue 34): added-latency (what the gateway adds to one call at
// c=1, per hop) and payloads (MB/s against the floor, RSS per byte in flight).

/** @param {number} ms */
const us = (ms) => `${Math.round(ms * 1000)} µs`;

/**
 * Lines for the report: each gateway row of added-latency against the direct row of its hop.
 * @param {any[]} rows
 * @returns {string[]}
 */
export function addedLatencyLines(rows) {
  const mine = rows.filter((r) => r.scenario === 'added-latency' && !r.skipped);
  const direct = new Map(mine.filter((r) => r.variant === 'direct').map((r) => [r.extra?.path, r]));
  const out = [];
  for (const r of mine) {
    const base = direct.get(r.extra?.path);
    if (r.variant === 'direct' || !base) continue;
    const p50 = r.latencyMs.p50 - base.latencyMs.p50;
    const p99 = r.latencyMs.p99 - base.latencyMs.p99;
    const aim = r.extra?.path === 'stdio' ? ` (aim ≤ 100 µs: ${p50 <= 0.1 ? 'met' : 'not met'})` : '';
    out.push(
      `- ${r.variant}: p50 ${us(r.latencyMs.p50)} vs ${us(base.latencyMs.p50)} direct, **+${us(p50)}**${aim}; ` +
        `p99 ${us(r.latencyMs.p99)} vs ${us(base.latencyMs.p99)}, +${us(p99)}; ${r.bad + base.bad} bad replies.`,
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
