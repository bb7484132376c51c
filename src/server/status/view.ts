/**
 * /status as HTML: one self-contained page (inline style, no script, no external asset), built
 * on the server from the same report as /status.json. Every value from the report is escaped.
 */
import { escapeHtml } from './escape.js';
import { quotaSection } from './quota-view.js';
import type { ListedEntries, NameList, ServerReport, StatusReport, UpstreamEntries, UpstreamReport } from './report.js';

export { escapeHtml };

/** The states that get a colour; anything else is shown plain. */
const STATE_CLASS: Record<string, string> = {
  ready: 'ok',
  closed: 'off',
  'half-open': 'warn',
  starting: 'warn',
  draining: 'warn',
  down: 'bad',
  open: 'bad',
};

function badge(state: string, tone: string = STATE_CLASS[state] ?? 'off'): string {
  return `<span class="badge ${tone}">${escapeHtml(state)}</span>`;
}

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [d ? `${d}d` : '', d || h ? `${h}h` : '', d || h || m ? `${m}m` : '', `${s}s`].filter(Boolean).join(' ');
}

const ERA_LABEL: Record<NonNullable<UpstreamReport['era']>, [string, string]> = {
  session: ['2025 session', ''],
  modern: ['2026-07-28', 'stateless'],
  dual: ['dual', '2026-07-28, and 2025 sessions'],
};

function eraCell(u: UpstreamReport): string {
  if (u.era === undefined) return muted('not known yet');
  const [label, note] = ERA_LABEL[u.era];
  const detail = u.era === 'session' ? (u.protocolVersion ?? '') : note;
  return `${escapeHtml(label)}${detail ? `<br>${muted(detail)}` : ''}`;
}

const muted = (text: unknown) => `<span class="muted">${escapeHtml(text)}</span>`;

function workersCell(u: UpstreamReport): string {
  if (u.workers === undefined || u.ready === undefined) return muted('none (stateless)');
  return `${escapeHtml(u.ready)}/${escapeHtml(u.workers)}${u.era === 'dual' ? `<br>${muted('2025 sessions')}` : ''}`;
}

/** Red while the upstream is not ready; an older failure of a ready one is history, shown plain. */
function failureCell(u: UpstreamReport): string {
  if (u.lastFailure === undefined) return `<td>${muted('none')}</td>`;
  const when = u.lastFailureAt;
  const time = when !== undefined ? `<time datetime="${escapeHtml(when)}">${escapeHtml(when)}</time>` : undefined;
  const at = time !== undefined ? `<br><span class="muted">at ${time}</span>` : '';
  return `<td class="${u.state === 'ready' ? 'past' : 'failure'}">${escapeHtml(u.lastFailure)}${at}</td>`;
}

function circuitFailures(u: UpstreamReport): string {
  return u.consecutiveFailures ? ` <span class="muted">${escapeHtml(u.consecutiveFailures)} failures</span>` : '';
}

function circuitRetry(u: UpstreamReport): string {
  if (u.retryAfterMs === undefined) return '';
  return ` <span class="muted">· retry in ${escapeHtml(Math.ceil(u.retryAfterMs / 1000))} s</span>`;
}

function upstreamRow(u: UpstreamReport): string {
  const circuit =
    u.circuit === undefined
      ? '<span class="muted">n/a</span>'
      : `${badge(u.circuit)}${circuitFailures(u)}${circuitRetry(u)}`;
  const asking = u.clientRequests
    ? `<br><span class="muted">${escapeHtml(u.clientRequests)} asking clients</span>`
    : '';
  const unpinned = u.unpinned
    ? `<br><span class="warn" title="definitions the pin lock does not pin">${escapeHtml(u.unpinned.length)} ` +
      `unpinned: ${escapeHtml(u.unpinned.map((f) => f.name).join(', '))}</span>`
    : '';
  return `<tr data-upstream="${escapeHtml(u.name)}" data-state="${escapeHtml(u.state)}"
 data-era="${escapeHtml(u.era ?? '')}">
<th scope="row">${escapeHtml(u.name)}${unpinned}</th><td>${badge(u.state)}</td><td>${eraCell(u)}</td>
<td>${escapeHtml(u.transport)} · ${escapeHtml(u.mode)}<br><span class="muted">${escapeHtml(u.target)}</span></td>
<td class="num">${workersCell(u)}</td>
<td class="num">${escapeHtml(u.inFlight)}${asking}</td><td class="num">${escapeHtml(u.queued)}</td>
<td>${circuit}</td>${failureCell(u)}</tr>`;
}

function names(list: NameList): string {
  if (list.count === 0) return '<span class="muted">none</span>';
  const more = list.count - list.names.length;
  const rest = more > 0 ? ` <span class="muted">and ${escapeHtml(more)} more</span>` : '';
  return `${list.names.map((n) => `<code>${escapeHtml(n)}</code>`).join(' ')}${rest}`;
}

function entriesCells(c: ListedEntries): string {
  const counted = (list: NameList) => `<td>${escapeHtml(list.count)}: ${names(list)}</td>`;
  return `${counted(c.tools)}${counted(c.prompts)}<td class="num">${escapeHtml(c.resources)}</td>`;
}

function catalogRow(upstream: string, listedBy: string, label: string, cells: string, sessions?: number): string {
  const count = sessions === undefined ? '' : ` data-sessions="${escapeHtml(sessions)}"`;
  const attributes = `data-catalog-upstream="${escapeHtml(upstream)}" data-listed-by="${listedBy}"${count}`;
  return `<tr ${attributes}><th scope="row">${label}</th>${cells}</tr>`;
}

/** An upstream's rows: its entries; a per-session one's shared list, then each list its sessions got. */
function catalogRows(upstream: string, c: UpstreamEntries): string {
  const name = escapeHtml(upstream);
  if (c.listedBy === 'shared') return catalogRow(upstream, 'shared', name, entriesCells(c));
  const probe = `${name}<br>${muted("2026-07-28 requests (the gateway's probe, offering every client capability)")}`;
  const rows = [catalogRow(upstream, 'probe', probe, entriesCells(c))];
  for (const l of c.sessions ?? []) {
    const label = muted(`${l.sessions} 2025 session(s) here, own worker`);
    rows.push(catalogRow(upstream, 'sessions', label, entriesCells(l), l.sessions));
  }
  const wide = (text: string) => `<td colspan="3">${muted(text)}</td>`;
  if (!c.sessions?.length) {
    const none = wide("each lists its own worker's: none has on this replica yet");
    rows.push(catalogRow(upstream, 'sessions', muted('2025 sessions'), none, 0));
  }
  if (c.otherSessions) {
    rows.push(catalogRow(upstream, 'other', '', wide(`and ${c.otherSessions} session(s) with other lists`)));
  }
  return rows.join('\n');
}

function serverSection(s: ServerReport): string {
  const rows = Object.entries(s.byUpstream)
    .map(([upstream, c]) => catalogRows(upstream, c))
    .join('\n');
  const t = s.totals;
  return `<section data-server="${escapeHtml(s.name)}"><h3>${escapeHtml(s.name)} <code>${escapeHtml(s.path)}</code></h3>
<p class="muted">${escapeHtml(t.tools)} tools, ${escapeHtml(t.prompts)} prompts, ${escapeHtml(t.resources)} resources, \
${escapeHtml(t.resourceTemplates)} resource templates listed, as clients list them \
(a down upstream's entries are not listed; per-principal tool permissions apply on top)</p>
<table><thead><tr><th>upstream</th><th>tools</th><th>prompts</th><th>resources</th></tr></thead><tbody>
${rows}
</tbody></table></section>`;
}

/** The reload line: how many, and the last one's outcome, time and error. */
function reloadLine(reload: StatusReport['config']['reload']): string {
  if (!reload.enabled) return 'not enabled';
  const ok = reload.lastOutcome === 'ok';
  const at = reload.lastAt !== undefined ? ` at ${escapeHtml(reload.lastAt)}` : '';
  const last = reload.lastOutcome ? ` · last ${badge(ok ? 'applied' : 'rejected', ok ? 'ok' : 'bad')}${at}` : '';
  const error = reload.lastError ? ` <span class="failure">${escapeHtml(reload.lastError)}</span>` : '';
  return `enabled · ${escapeHtml(reload.count)} reload(s)${last}${error}`;
}

function configLines(r: StatusReport): string {
  const c = r.config;
  const reload = reloadLine(c.reload);
  const file = c.file === null ? 'built-in default' : `<code>${escapeHtml(c.file)}</code>`;
  return `<dt>config</dt><dd>${file}, loaded ${escapeHtml(c.loadedAt)}</dd>
<dt>reload</dt><dd data-reload>${reload}</dd>`;
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1d2125;--muted:#667;--line:#d8dde3;--bg:#fff;--head:#f3f5f7}
@media (prefers-color-scheme:dark){:root{--fg:#e6e8ea;--muted:#9aa3ad;--line:#3a4048;--bg:#16191d;--head:#20252b}}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;padding:1.2rem 1.5rem;\
max-width:78rem;color:var(--fg);background:var(--bg)}
h1{font-size:1.35rem;margin:0 0 .2rem}h2{font-size:1.1rem;margin:1.6rem 0 .5rem}h3{font-size:1rem;margin:1rem 0 .4rem}
table{border-collapse:collapse;width:100%}\
th,td{text-align:left;vertical-align:top;padding:.35rem .55rem;border-bottom:1px solid var(--line)}
thead th{background:var(--head);font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:0 .45rem;border-radius:.6rem;font-size:.85em;font-weight:600;color:#fff}
.ok{background:#1f883d}.bad{background:#cf222e}.warn{background:#bf8700}.off{background:#6e7781}
.muted{color:var(--muted)}.failure,.past{word-break:break-word;max-width:28rem}.failure{color:#cf222e}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.4rem 0}dt{font-weight:600}dd{margin:0}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,monospace}
`;

/** The whole page; `refreshSeconds` 0 leaves out the self-refresh. */
export function renderStatusPage(r: StatusReport, refreshSeconds: number): string {
  const g = r.gateway;
  const refresh = refreshSeconds > 0 ? `<meta http-equiv="refresh" content="${escapeHtml(refreshSeconds)}">` : '';
  const down = r.upstreams.filter((u) => u.state !== 'ready').length;
  const every = refreshSeconds > 0 ? ` · refreshes every ${escapeHtml(refreshSeconds)} s` : '';
  const sessions = r.sessions.count === null ? 'unknown (store not answering)' : escapeHtml(r.sessions.count);
  const known = r.sessions.store === 'redis' ? ', known to this replica' : ', this replica';
  const storeState = r.sessions.storeState !== undefined ? `, ${escapeHtml(r.sessions.storeState)}` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">\
<meta name="viewport" content="width=device-width,initial-scale=1">${refresh}
<title>mcp-gateway status</title><style>${STYLE}</style></head>
<body>
<header><h1>mcp-gateway ${badge(g.state)}</h1>
<p class="muted">version ${escapeHtml(g.version)} · up ${escapeHtml(duration(g.uptimeSeconds))} \
(since ${escapeHtml(g.startedAt)}) · generated ${escapeHtml(g.generatedAt)}${every} · \
<a href="status.json">status.json</a></p></header>
<h2>Upstreams <span class="muted">${escapeHtml(r.upstreams.length)} configured, ${escapeHtml(down)} not ready\
</span></h2>
<table><thead><tr><th>name</th><th>state</th><th>era</th><th>transport</th>
<th>ready / workers</th><th>in flight</th><th>queued</th><th>circuit</th><th>last failure</th></tr></thead><tbody>
${r.upstreams.map(upstreamRow).join('\n')}
</tbody></table>
<h2>Clients</h2>
<dl>
<dt>sessions</dt><dd data-sessions>${sessions} <span class="muted">(${escapeHtml(r.sessions.store)} store${known}\
${storeState})</span></dd>
<dt>streams</dt><dd><span class="muted">this replica:</span> ${escapeHtml(r.streams.get)} session GET stream(s), \
${escapeHtml(r.streams.listen)} listen stream(s), ${escapeHtml(r.streams.replies)} POST reply stream(s) in progress</dd>
<dt>input chains</dt><dd>${escapeHtml(r.inputChains)} \
<span class="muted">(this replica: 2026-07-28 calls waiting for or running after client input)</span></dd>
${configLines(r)}
</dl>
<h2>Catalog</h2>
${r.servers.map(serverSection).join('\n')}
${quotaSection(r.quotas)}
</body></html>
`;
}
