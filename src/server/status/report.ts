/**
 * The data of /status and /status.json, gathered through read-only views of the running parts
 * (upstream status, catalog, counters). Nothing secret goes in: no headers, tokens, env values,
 * commands' arguments or URLs beyond their origin, and every free text (an upstream's last
 * error) is cut short with credentials and query strings taken out.
 */
import type { ConfigStatusSnapshot } from '../../config/reload-state.js';
import type { UpstreamConfig } from '../../config/schema.js';
import { speaksStateless } from '../../config/upstream-common.js';
import type { CatalogReader, PinFlag } from '../../gateway/catalog.js';
import type { PoolStatus } from '../../upstream/pool.js';
import type { QuotaReport } from '../../quota/quotas.js';

/** One list of names is shown up to this many entries (a count says how many more). */
const MAX_NAMES = 500;
const MAX_TEXT_CHARS = 300;
/** Distinct lists of sessions' own workers shown per upstream; the sessions of any further one are counted. */
const MAX_SESSION_LISTS = 20;
/** Sessions whose own lists are read for one report; the rest are counted, unread. */
const MAX_SESSIONS_READ = 1000;

/** A virtual server as the page shows it: its endpoint and its current catalog. */
export interface StatusServer {
  name: string;
  path: string;
  /** The shared catalog: what 2026-07-28 requests list, and 2025 sessions for every shared upstream. */
  catalog: () => CatalogReader;
  /** What 2025 sessions on this replica last listed from their own workers (through this server's selection). */
  sessions: () => readonly CatalogReader[];
}

export interface StatusSources {
  version: string;
  startedAt: Date;
  /** The configured upstreams (a function: a reload may change them). */
  upstreams: () => readonly UpstreamConfig[];
  upstreamStatus: () => Record<string, PoolStatus>;
  servers: () => readonly StatusServer[];
  /** Whether a 2025 session lists this upstream from a worker of its own (mode per-session). */
  listsPerSession: (upstream: string) => boolean;
  sessionStore: string;
  sessions: () => Promise<number>;
  storeState?: () => { state: string };
  streams: () => { get: number; listen: number; replies: number };
  inputChains: () => number;
  /** Each quota's window and its top consumers (with Redis: across replicas). */
  quotas?: () => Promise<QuotaReport[]>;
  config: () => ConfigStatusSnapshot;
  isReady: () => boolean;
  isDraining: () => boolean;
  /** The main catalog's definitions the pin lock does not pin (pinning warn or enforce). */
  pinFlags?: () => readonly PinFlag[];
}

export interface UpstreamReport {
  name: string;
  transport: string;
  mode: string;
  /** stdio: the command's file name; http: the URL's origin. */
  target: string;
  state: string;
  /** How the gateway speaks to it (as /readyz's era says); absent while not known yet. */
  era?: 'session' | 'modern' | 'dual';
  protocolVersion?: string;
  /** Its workers (2025 sessions with it); absent for a 2026-07-28 upstream, which has none. */
  workers?: number;
  ready?: number;
  inFlight: number;
  queued: number;
  clientRequests?: number;
  circuit?: string;
  consecutiveFailures?: number;
  retryAfterMs?: number;
  lastFailure?: string;
  /** When the last failure happened (ISO 8601). */
  lastFailureAt?: string;
  /** Its tools and prompts the pin lock does not pin: served (warn) or withheld (enforce). Absent: none. */
  unpinned?: Array<{ kind: string; name: string; verdict: string; served: boolean }>;
}

export interface NameList {
  count: number;
  names: string[];
}

export interface ListedEntries {
  tools: NameList;
  prompts: NameList;
  resources: number;
}

/** One upstream's entries on a server, as clients list them. */
export interface UpstreamEntries extends ListedEntries {
  /**
   * `shared`: every client lists the entries above. `per-session`: 2025 sessions list their own
   * workers' (`sessions`); the entries above are the shared catalog's, which 2026-07-28 requests
   * list, from the gateway's probe (offering every client capability).
   */
  listedBy: 'shared' | 'per-session';
  /** per-session: each distinct list sessions on this replica last got, with how many sessions got it. */
  sessions?: Array<ListedEntries & { sessions: number }>;
  /** Sessions whose list is not shown (past MAX_SESSION_LISTS distinct ones, or MAX_SESSIONS_READ sessions). */
  otherSessions?: number;
}

export interface ServerReport {
  name: string;
  path: string;
  totals: { tools: number; prompts: number; resources: number; resourceTemplates: number };
  byUpstream: Record<string, UpstreamEntries>;
}

export interface StatusReport {
  gateway: {
    version: string;
    state: 'starting' | 'ready' | 'draining';
    startedAt: string;
    uptimeSeconds: number;
    generatedAt: string;
  };
  config: ConfigStatusSnapshot;
  sessions: { store: string; storeState?: string; count: number | null };
  streams: { get: number; listen: number; replies: number };
  inputChains: number;
  upstreams: UpstreamReport[];
  servers: ServerReport[];
  quotas: QuotaReport[];
}

/** Free text as it may be shown: no URL credentials, query strings or fragments, no bearer tokens, bounded. */
export function redact(text: string): string {
  const cleaned = text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s/?#@]*@)?([^\s?#]*)(?:\?[^\s#]*)?(?:#\S*)?/gi, '$1$2')
    .replace(/\b(bearer|basic|token|api[-_]?key|password|secret)([\s:=]+)\S+/gi, '$1$2[redacted]');
  return cleaned.length > MAX_TEXT_CHARS ? `${cleaned.slice(0, MAX_TEXT_CHARS)}…` : cleaned;
}

function targetOf(u: UpstreamConfig): string {
  if (u.transport === 'stdio') return u.command.split(/[\\/]/).pop() ?? '';
  try {
    return new URL(u.url).origin;
  } catch {
    return '';
  }
}

/**
 * The failure to show: the circuit's while it is not closed (the cause: the workers' start
 * errors then only repeat it), else the newer of its last one and the workers' last start error.
 */
function lastFailureOf(s: PoolStatus): { text: string; at?: string | undefined } | undefined {
  const circuit = s.lastFailure !== undefined ? { text: s.lastFailure, at: s.lastFailureAt } : undefined;
  const workers = s.lastError !== undefined ? { text: s.lastError, at: s.lastErrorAt } : undefined;
  if (!circuit || !workers || s.circuit !== 'closed') return circuit ?? workers;
  return (workers.at ?? '') > (circuit.at ?? '') ? workers : circuit;
}

/** As the workers say (`auto` learns it); one that has not answered yet has the era its config leaves it. */
function eraOf(u: UpstreamConfig, s: PoolStatus): UpstreamReport['era'] {
  if (s.era !== undefined) return s.era;
  const speaks = speaksStateless(u);
  return speaks === 'no' ? 'session' : speaks === 'only' ? 'modern' : undefined;
}

function upstreamReport(u: UpstreamConfig, s: PoolStatus | undefined): UpstreamReport {
  const status: PoolStatus = s ?? { state: 'closed', workers: 0, ready: 0, inFlight: 0, queued: 0 };
  const failure = lastFailureOf(status);
  const era = eraOf(u, status);
  return {
    name: u.name,
    transport: u.transport,
    mode: u.mode,
    target: targetOf(u),
    state: status.state,
    ...(era !== undefined ? { era } : {}),
    ...(status.protocolVersion !== undefined ? { protocolVersion: status.protocolVersion } : {}),
    // A 2026-07-28 upstream has no workers: each call is a request of its own (counted in flight).
    ...(era === 'modern' ? {} : { workers: status.workers, ready: status.ready }),
    inFlight: status.inFlight,
    queued: status.queued,
    ...(status.clientRequests !== undefined ? { clientRequests: status.clientRequests } : {}),
    ...(status.circuit !== undefined ? { circuit: status.circuit } : {}),
    ...(status.consecutiveFailures !== undefined ? { consecutiveFailures: status.consecutiveFailures } : {}),
    ...(status.retryAfterMs !== undefined ? { retryAfterMs: status.retryAfterMs } : {}),
    ...(failure !== undefined ? { lastFailure: redact(failure.text) } : {}),
    ...(failure?.at !== undefined ? { lastFailureAt: failure.at } : {}),
  };
}

/** Flags `report` with its upstream's unpinned definitions (up to MAX_NAMES of them). */
function withPinFlags(report: UpstreamReport, flags: readonly PinFlag[]): UpstreamReport {
  const mine = flags.filter((f) => f.upstream === report.name).slice(0, MAX_NAMES);
  if (mine.length === 0) return report;
  const unpinned = mine.map((f) => ({
    kind: f.kind,
    name: f.name.slice(0, MAX_TEXT_CHARS),
    verdict: f.verdict,
    served: f.served,
  }));
  return { ...report, unpinned };
}

function addName(list: NameList, name: string): void {
  list.count++;
  if (list.names.length < MAX_NAMES) list.names.push(name.slice(0, MAX_TEXT_CHARS));
}

function emptyEntries(): ListedEntries {
  return { tools: { count: 0, names: [] }, prompts: { count: 0, names: [] }, resources: 0 };
}

/** Which upstream (of `names`) each listed tool, prompt and resource of a catalog comes from. */
function entriesByUpstream(catalog: CatalogReader, names: readonly string[]): Map<string, ListedEntries> {
  const by = new Map(names.map((n) => [n, emptyEntries()]));
  const slot = (upstream: string | undefined) => (upstream !== undefined ? by.get(upstream) : undefined);
  for (const t of catalog.list('tools')) {
    if (typeof t.name === 'string') slotAdd(slot(catalog.tool(t.name)?.upstream)?.tools, t.name);
  }
  for (const p of catalog.list('prompts')) {
    if (typeof p.name === 'string') slotAdd(slot(catalog.prompt(p.name)?.upstream)?.prompts, p.name);
  }
  for (const r of catalog.list('resources')) {
    const s = typeof r.uri === 'string' ? slot(catalog.resource(r.uri)?.upstream) : undefined;
    if (s) s.resources++;
  }
  return by;
}

function slotAdd(list: NameList | undefined, name: string): void {
  if (list) addName(list, name);
}

type SessionLists = Pick<UpstreamEntries, 'sessions' | 'otherSessions'>;

/**
 * The per-session upstreams' lists as sessions got them: each distinct list once, most sessions
 * first. At most MAX_SESSIONS_READ sessions are read (the page is built on each request).
 */
function sessionLists(sessions: readonly CatalogReader[], own: readonly string[]): Map<string, SessionLists> {
  const distinct = new Map(own.map((n) => [n, new Map<string, ListedEntries & { sessions: number }>()]));
  for (const catalog of sessions.slice(0, MAX_SESSIONS_READ)) {
    for (const [upstream, entries] of entriesByUpstream(catalog, own)) {
      const lists = distinct.get(upstream)!;
      const key = JSON.stringify([entries.tools, entries.prompts, entries.resources]);
      const seen = lists.get(key);
      if (seen) seen.sessions++;
      else lists.set(key, { ...entries, sessions: 1 });
    }
  }
  const unread = Math.max(0, sessions.length - MAX_SESSIONS_READ);
  const out = new Map<string, SessionLists>();
  for (const [upstream, lists] of distinct) {
    const all = [...lists.values()].sort((a, b) => b.sessions - a.sessions);
    const other = all.slice(MAX_SESSION_LISTS).reduce((n, l) => n + l.sessions, unread);
    out.set(upstream, { sessions: all.slice(0, MAX_SESSION_LISTS), ...(other > 0 ? { otherSessions: other } : {}) });
  }
  return out;
}

/** A server's catalog by upstream, as its clients list it (a per-session upstream: as each session does). */
function serverReport(
  server: StatusServer,
  upstreams: readonly UpstreamConfig[],
  perSession: (upstream: string) => boolean,
): ServerReport {
  const catalog = server.catalog();
  const shared = entriesByUpstream(
    catalog,
    upstreams.map((u) => u.name),
  );
  const own = upstreams.filter((u) => perSession(u.name)).map((u) => u.name);
  const bySessions = own.length > 0 ? sessionLists(server.sessions(), own) : new Map<string, SessionLists>();
  const byUpstream: ServerReport['byUpstream'] = {};
  for (const u of upstreams) {
    const entries = shared.get(u.name)!;
    const lists = bySessions.get(u.name);
    byUpstream[u.name] = lists ? { ...entries, listedBy: 'per-session', ...lists } : { ...entries, listedBy: 'shared' };
  }
  return {
    name: server.name,
    path: server.path,
    totals: {
      tools: catalog.list('tools').length,
      prompts: catalog.list('prompts').length,
      resources: catalog.list('resources').length,
      resourceTemplates: catalog.list('resourceTemplates').length,
    },
    byUpstream,
  };
}

/** One snapshot of everything the page shows. */
export async function gatherStatus(sources: StatusSources): Promise<StatusReport> {
  const now = new Date();
  let count: number | null;
  try {
    count = await sources.sessions();
  } catch {
    // A store that cannot answer (Redis down) leaves the rest of the page worth showing.
    count = null;
  }
  const state = sources.isDraining() ? 'draining' : sources.isReady() ? 'ready' : 'starting';
  const pools = sources.upstreamStatus();
  const storeState = sources.storeState?.().state;
  const upstreams = sources.upstreams();
  return {
    gateway: {
      version: sources.version,
      state,
      startedAt: sources.startedAt.toISOString(),
      uptimeSeconds: Math.max(0, Math.floor((now.getTime() - sources.startedAt.getTime()) / 1000)),
      generatedAt: now.toISOString(),
    },
    config: sources.config(),
    sessions: { store: sources.sessionStore, ...(storeState !== undefined ? { storeState } : {}), count },
    streams: sources.streams(),
    inputChains: sources.inputChains(),
    upstreams: upstreams.map((u) => withPinFlags(upstreamReport(u, pools[u.name]), sources.pinFlags?.() ?? [])),
    servers: sources.servers().map((s) => serverReport(s, upstreams, sources.listsPerSession)),
    quotas: (await sources.quotas?.()) ?? [],
  };
}
