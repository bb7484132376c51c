/**
 * Which tool and prompt definitions the catalog serves, held to the pin lock (config/pin-lock.ts):
 * a definition whose digest the lock does not have for its upstream and name is a finding. In
 * `warn` it is served and reported; in `enforce` the catalog (catalog.ts, the one place lists and
 * routes are built) leaves it out of every list and its route refuses calls, TOOL_DEFINITION_CHANGED
 * when the lock pins that name with another digest, TOOL_NOT_PINNED when it pins no such name.
 * The verdict is a pure function of the definition and the lock: replicas reading the same file agree.
 */
import type { GatewayConfig, PinMode } from '../config/schema.js';
import { pinModes } from '../config/pinning.js';
import { EMPTY_LOCK, definitionDigest, pinOf, readLockFile, type PinKind, type PinLock } from '../config/pin-lock.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { DataPathEvents } from '../observability/events.js';
import { LogThrottle, suppressedField } from '../observability/log-throttle.js';
import type { Logger } from '../observability/logger.js';

export type PinVerdict = 'TOOL_DEFINITION_CHANGED' | 'TOOL_NOT_PINNED';

/** A definition the lock does not pin, as reported (never its text: only where it is and why). */
export interface PinFinding {
  upstream: string;
  kind: PinKind;
  /** The upstream's own name for it. */
  name: string;
  verdict: PinVerdict;
  mode: 'warn' | 'enforce';
}

export interface PinSettings {
  modes: ReadonlyMap<string, PinMode>;
  lock: PinLock;
}

/** Findings remembered so each is reported once per process, whatever number of catalogs are built. */
const MAX_REPORTED = 10_000;

/** The settings `config` gives: each upstream's mode and the lock, read now (a malformed lock throws, naming it). */
export function pinSettings(config: Pick<GatewayConfig, 'pinning' | 'upstreams'>): PinSettings {
  const modes = pinModes(config.pinning, config.upstreams);
  const on = [...modes.values()].some((m) => m !== 'off');
  const file = config.pinning?.lockFile;
  return { modes, lock: on && file ? readLockFile(file) : EMPTY_LOCK };
}

export class PinPolicy {
  #settings: PinSettings;
  /** Digests by definition object: catalogs are rebuilt often over the same lists. */
  readonly #digests = new WeakMap<object, string>();
  readonly #reported = new Set<string>();
  readonly #rebuilds: Array<() => readonly string[]> = [];

  constructor(
    settings: PinSettings,
    private readonly report: (finding: PinFinding) => void = () => undefined,
  ) {
    this.#settings = settings;
  }

  /** Whether any upstream is pinned at all (off everywhere: catalogs skip the digests). */
  get active(): boolean {
    for (const m of this.#settings.modes.values()) if (m !== 'off') return true;
    return false;
  }

  /** `rebuild` builds a catalog again under new settings, returning the list_changed methods it sent. */
  onChange(rebuild: () => readonly string[]): void {
    this.#rebuilds.push(rebuild);
  }

  /** New settings (a reload): every catalog is built again over them; returns the list_changed methods sent. */
  set(settings: PinSettings): string[] {
    this.#settings = settings;
    return [...new Set(this.#rebuilds.flatMap((rebuild) => rebuild()))];
  }

  /** The verdict on one definition, and its mode; undefined: pinned, or pinning off for its upstream. */
  judge(
    upstream: string,
    kind: PinKind,
    definition: Readonly<Record<string, unknown>>,
  ): { verdict: PinVerdict; mode: 'warn' | 'enforce' } | undefined {
    const mode = this.#settings.modes.get(upstream) ?? 'off';
    if (mode === 'off' || typeof definition.name !== 'string') return undefined;
    let digest = this.#digests.get(definition);
    if (digest === undefined) {
      digest = definitionDigest(kind, definition);
      this.#digests.set(definition, digest);
    }
    const pinned = pinOf(this.#settings.lock, upstream, kind, definition.name)?.sha256;
    if (pinned === digest) return undefined;
    const verdict: PinVerdict = pinned === undefined ? 'TOOL_NOT_PINNED' : 'TOOL_DEFINITION_CHANGED';
    const key = `${upstream}\0${kind}\0${definition.name}\0${digest}\0${mode}`;
    if (!this.#reported.has(key)) {
      if (this.#reported.size >= MAX_REPORTED) this.#reported.clear();
      this.#reported.add(key);
      this.report({ upstream, kind, name: definition.name, verdict, mode });
    }
    return { verdict, mode };
  }
}

/** The error a call of a refused entry gets: where and why, never the definition. */
export function pinRefusal(verdict: PinVerdict, upstream: string, kind: PinKind, name: string): GatewayError {
  const what = kind === 'tools' ? 'Tool' : 'Prompt';
  const why =
    verdict === 'TOOL_DEFINITION_CHANGED'
      ? 'changed its definition since it was pinned'
      : 'has a definition the pin lock has never seen';
  return new GatewayError(
    verdict,
    `${what} ${name} of upstream ${upstream} ${why}: refused until the lock pins it (mcpgw pin, then a reload)`,
    { upstream, [kind === 'tools' ? 'tool' : 'prompt']: name },
  );
}

/** How findings are told: a log line (throttled per upstream) and a `pin:finding` event (metric, audit). */
export function pinReporter(log: Logger, diagnostics: DataPathEvents, intervalMs: number): (f: PinFinding) => void {
  const throttle = new LogThrottle(intervalMs);
  return (finding) => {
    diagnostics.emit('pin:finding', { ...finding });
    const suppressed = throttle.take(finding.upstream);
    if (suppressed === undefined) return;
    log.warn(
      { ...finding, ...suppressedField(suppressed) },
      finding.mode === 'enforce'
        ? 'a definition the pin lock does not pin is withheld (pinning: enforce)'
        : 'a definition the pin lock does not pin is served (pinning: warn)',
    );
  };
}
