/**
 * /status's quotas: per quota, its window and the top consumers of each measure it limits, as
 * used / limit. Principals are any text a token or API key names: every value is escaped.
 */
import type { QuotaReport } from '../../quota/quotas.js';
import { escapeHtml } from './escape.js';

const LABEL = { calls: 'calls', upstreamSeconds: 's upstream' } as const;

/** Calls are whole; seconds are shown to the tenth. */
const amount = (measure: keyof typeof LABEL, n: number) =>
  measure === 'calls' ? String(n) : String(Math.round(n * 10) / 10);

function quotaRows(q: QuotaReport): string {
  const rows: string[] = [];
  for (const m of q.measures) {
    if (m.top.length === 0) {
      rows.push(`<tr><td colspan="3"><span class="muted">no ${LABEL[m.measure]} used yet</span></td></tr>`);
      continue;
    }
    for (const t of m.top)
      rows.push(`<tr data-quota-principal="${escapeHtml(t.principal)}" data-measure="${m.measure}">
<th scope="row">${escapeHtml(t.principal)}</th><td>${escapeHtml(LABEL[m.measure])}</td>\
<td class="num">${escapeHtml(amount(m.measure, t.used))} / ${escapeHtml(amount(m.measure, m.limit))}</td></tr>`);
  }
  return rows.join('\n');
}

function quotaTable(q: QuotaReport): string {
  const store = q.unavailable ? ' <span class="failure">counter store not answering</span>' : '';
  return `<section data-quota="${escapeHtml(q.name)}"><h3>${escapeHtml(q.name)} \
<span class="muted">per ${escapeHtml(q.window)} (UTC), resets ${escapeHtml(q.resetAt)}</span>${store}</h3>
<table><caption class="muted">Top consumers</caption>
<thead><tr><th>principal</th><th>measure</th><th>used / limit</th></tr></thead><tbody>
${quotaRows(q)}
</tbody></table></section>`;
}

/** Nothing without quotas. */
export function quotaSection(quotas: readonly QuotaReport[]): string {
  if (quotas.length === 0) return '';
  return `<h2>Quotas <span class="muted">top consumers of this window</span></h2>
${quotas.map(quotaTable).join('\n')}`;
}
