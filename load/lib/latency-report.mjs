// @ts-check
// The added-latency scenario's summary: per hop, what the gateway adds to one call at c=1.

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
