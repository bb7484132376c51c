/**
 * The data of /status and /status.json, gathered through read-only views of the running parts
 * (upstream status, catalog, counters). Nothing secret goes in: no headers, tokens, env values,
 * commands' arguments or URLs beyond their origin, and every free text (an upstream's last
 * error) is cut short with credentials and query strings taken out.
 */
import type { ConfigStatusSnapshot } from '../../config/reload-state.js';
import type { UpstreamConfig } from '../../config/schema.js';
import type { CatalogReader } from '../../gateway/catalog.js';
import type { PoolStatus } from '../../upstream/pool.js';

/** One list of names is shown up to this many entries (a count says how many more). */
const MAX_NAMES = 500;
const MAX_TEXT_CHARS = 300;

/** A virtual server as the page shows it: its endpoint and its current catalog. */
export interface StatusServer {
  name: string;
  path: string;
  catalog: () => CatalogReader;
}

export interface StatusSources {
  version: string;
  startedAt: Date;
  /** The configured upstreams (a function: a reload may change them). */
  upstreams: () => readonly UpstreamConfig[];
  upstreamStatus: () => Record<string, PoolStatus>;
  servers: () => readonly StatusServer[];
  sessionStore: string;
  sessions: () => Promise<number>;
  storeState?: () => { state: string };
  streams: () => { get: number; listen: number; replies: number };
  inputChains: () => number;
  config: () => ConfigStatusSnapshot;
  isReady: () => boolean;
  isDraining: () => boolean;
}

export interface UpstreamReport {
  name: string;
  transport: string;
  mode: string;
  /** stdio: the command's file name; http: the URL's origin. */
  target: string;
  state: string;
  workers: number;
  ready: number;
  inFlight: number;
  queued: number;
  clientRequests?: number;
  circuit?: string;
  consecutiveFailures?: number;
  retryAfterMs?: number;
  lastFailure?: string;
}

export interface NameList {
  count: number;
  names: string[];
}

export interface ServerReport {
  name: string;
  path: string;
  totals: { tools: number; prompts: number; resources: number; resourceTemplates: number };
  byUpstream: Record<string, { tools: NameList; prompts: NameList; resources: number }>;
}

export interface StatusReport {
  gateway: { version: string; state: 'starting' | 'ready' | 'draining'; startedAt: string; uptimeSeconds: number; generatedAt: string };
  config: ConfigStatusSnapshot;
  sessions: { store: string; storeState?: string; count: number | null };
  streams: { get: number; listen: number; replies: number };
  inputChains: number;
  upstreams: UpstreamReport[];
  servers: ServerReport[];
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

function upstreamReport(u: UpstreamConfig, s: PoolStatus | undefined): UpstreamReport {
  const status: PoolStatus = s ?? { state: 'closed', workers: 0, ready: 0, inFlight: 0, queued: 0 };
  const failure = status.lastFailure ?? status.lastError;
  return {
    name: u.name,
    transport: u.transport,
    mode: u.mode,
    target: targetOf(u),
    state: status.state,
    workers: status.workers,
    ready: status.ready,
    inFlight: status.inFlight,
    queued: status.queued,
    ...(status.clientRequests !== undefined ? { clientRequests: status.clientRequests } : {}),
    ...(status.circuit !== undefined ? { circuit: status.circuit } : {}),
    ...(status.consecutiveFailures !== undefined ? { consecutiveFailures: status.consecutiveFailures } : {}),
    ...(status.retryAfterMs !== undefined ? { retryAfterMs: status.retryAfterMs } : {}),
    ...(failure !== undefined ? { lastFailure: redact(failure) } : {}),
  };
}

function addName(list: NameList, name: string): void {
  list.count++;
  if (list.names.length < MAX_NAMES) list.names.push(name.slice(0, MAX_TEXT_CHARS));
}

/** Which upstream each listed tool, prompt and resource of a catalog comes from. */
function serverReport(server: StatusServer, upstreams: readonly UpstreamConfig[]): ServerReport {
  const catalog = server.catalog();
  const byUpstream: ServerReport['byUpstream'] = {};
  for (const u of upstreams) byUpstream[u.name] = { tools: { count: 0, names: [] }, prompts: { count: 0, names: [] }, resources: 0 };
  const slot = (upstream: string | undefined) => (upstream !== undefined ? byUpstream[upstream] : undefined);
  const tools = catalog.list('tools');
  const prompts = catalog.list('prompts');
  const resources = catalog.list('resources');
  for (const t of tools) if (typeof t.name === 'string') { const s = slot(catalog.tool(t.name)?.upstream); if (s) addName(s.tools, t.name); }
  for (const p of prompts) if (typeof p.name === 'string') { const s = slot(catalog.prompt(p.name)?.upstream); if (s) addName(s.prompts, p.name); }
  for (const r of resources) if (typeof r.uri === 'string') { const s = slot(catalog.resource(r.uri)?.upstream); if (s) s.resources++; }
  return {
    name: server.name,
    path: server.path,
    totals: { tools: tools.length, prompts: prompts.length, resources: resources.length, resourceTemplates: catalog.list('resourceTemplates').length },
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
    upstreams: upstreams.map((u) => upstreamReport(u, pools[u.name])),
    servers: sources.servers().map((s) => serverReport(s, upstreams)),
  };
}
