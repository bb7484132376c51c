/**
 * What /status says about the config: when and from where it was loaded, and how reloads went.
 * The reload feature itself lives elsewhere; it reports here (enableReload, recordReload), and
 * until it does the page says plainly that reload is not enabled.
 */

export type ReloadOutcome = 'applied' | 'rejected';

export interface ConfigStatusSnapshot {
  loadedAt: string;
  /** The config file, or null for the built-in default configuration. */
  source: string | null;
  reload:
    | { enabled: false }
    | { enabled: true; count: number; lastOutcome?: ReloadOutcome; lastAt?: string; lastError?: string };
}

/** Longest reload error kept: an operator needs the first line, not a dump. */
const MAX_ERROR_CHARS = 500;

export class ConfigStatus {
  #loadedAt: Date;
  #source: string | null;
  #reloadEnabled = false;
  #count = 0;
  #last: { outcome: ReloadOutcome; at: Date; error?: string } | undefined;

  constructor(source: string | null = null, loadedAt: Date = new Date()) {
    this.#source = source;
    this.#loadedAt = loadedAt;
  }

  /** Where the running config came from (main.ts knows; a gateway built in code has none). */
  setSource(source: string | null, loadedAt: Date = new Date()): void {
    this.#source = source;
    this.#loadedAt = loadedAt;
  }

  /** Called by whatever wires config reload in: from now on the page shows its count and last outcome. */
  enableReload(): void {
    this.#reloadEnabled = true;
  }

  /** One reload attempt: an applied one also moves `loadedAt`. */
  recordReload(outcome: ReloadOutcome, error?: string, at: Date = new Date()): void {
    this.#reloadEnabled = true;
    this.#count++;
    this.#last = { outcome, at, ...(error !== undefined ? { error: error.slice(0, MAX_ERROR_CHARS) } : {}) };
    if (outcome === 'applied') this.#loadedAt = at;
  }

  snapshot(): ConfigStatusSnapshot {
    const base = { loadedAt: this.#loadedAt.toISOString(), source: this.#source };
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
