/**
 * What /status says about the config: when and from where it was loaded, and how reloads went.
 * Config reload itself lives elsewhere: it reports here (enableReload, recordReload), or hands
 * its own status to `snapshotOfReload`; until then the page says plainly that reload is not enabled.
 */

export type ReloadOutcome = 'ok' | 'rejected';

export interface ConfigStatusSnapshot {
  loadedAt: string;
  /** The config file, or null for the built-in default configuration. */
  file: string | null;
  reload:
    | { enabled: false }
    | { enabled: true; count: number; lastOutcome?: ReloadOutcome; lastAt?: string; lastError?: string };
}

/** A reload feature's own account of itself (structurally: nothing here imports it). */
export interface ReloadStatusLike {
  loadedAt: string;
  file: string | undefined;
  count: number;
  lastOutcome: ReloadOutcome | undefined;
  lastError: string | undefined;
}

/** Longest reload error kept: an operator needs the first line, not a dump. */
const MAX_ERROR_CHARS = 500;

/** The snapshot of a gateway whose reload is wired in and keeps its own status. */
export function snapshotOfReload(status: ReloadStatusLike): ConfigStatusSnapshot {
  return {
    loadedAt: status.loadedAt,
    file: status.file ?? null,
    reload: {
      enabled: true,
      count: status.count,
      ...(status.lastOutcome !== undefined ? { lastOutcome: status.lastOutcome } : {}),
      ...(status.lastError !== undefined ? { lastError: status.lastError.slice(0, MAX_ERROR_CHARS) } : {}),
    },
  };
}

export class ConfigStatus {
  #loadedAt: Date;
  #file: string | null;
  #reloadEnabled = false;
  #count = 0;
  #last: { outcome: ReloadOutcome; at: Date; error?: string } | undefined;

  constructor(file: string | null = null, loadedAt: Date = new Date()) {
    this.#file = file;
    this.#loadedAt = loadedAt;
  }

  /** Where the running config came from (main.ts knows; a gateway built in code has none). */
  setSource(file: string | null, loadedAt: Date = new Date()): void {
    this.#file = file;
    this.#loadedAt = loadedAt;
  }

  /** Called by whatever wires config reload in: from now on the page shows its count and last outcome. */
  enableReload(): void {
    this.#reloadEnabled = true;
  }

  /** One reload attempt: an applied one (`ok`) also moves `loadedAt`. */
  recordReload(outcome: ReloadOutcome, error?: string, at: Date = new Date()): void {
    this.#reloadEnabled = true;
    this.#count++;
    this.#last = { outcome, at, ...(error !== undefined ? { error: error.slice(0, MAX_ERROR_CHARS) } : {}) };
    if (outcome === 'ok') this.#loadedAt = at;
  }

  snapshot(): ConfigStatusSnapshot {
    const base = { loadedAt: this.#loadedAt.toISOString(), file: this.#file };
    if (!this.#reloadEnabled) return { ...base, reload: { enabled: false } };
    const last = this.#last;
    return {
      ...base,
      reload: {
        enabled: true,
        count: this.#count,
        ...(last ? { lastOutcome: last.outcome, lastAt: last.at.toISOString() } : {}),
        ...(last?.error !== undefined ? { lastError: last.error } : {}),
      },
    };
  }
}
