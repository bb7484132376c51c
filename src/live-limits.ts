// The admissions a request passes before its handler, as the config says and each reload
// replaces: the rate limits (rate-limit/), then the quotas (quota/). Each keeps its own store.
import type { ConfigDiff } from './config/diff.js';
import type { GatewayConfig } from './config/schema.js';
import type { DataPathEvents } from './observability/events.js';
import type { Logger } from './observability/logger.js';
import { LiveQuotas } from './quota/live-quotas.js';
import type { QuotaReport } from './quota/quotas.js';
import { LiveRateLimits } from './rate-limit/live-rate-limits.js';
import type { Admission } from './rate-limit/request-facts.js';

export interface LiveLimits {
  /** A reload's rate limits and quotas, the sections that changed. */
  apply(next: GatewayConfig, diff: ConfigDiff): void;
  /** For /status. */
  quotaReport(): Promise<QuotaReport[]>;
  close(): Promise<void>;
}

/** Both, set from `config` at once: `setAdmissions` hears the rate limits first, then the quotas. */
export function liveLimits(
  config: GatewayConfig,
  diagnostics: DataPathEvents,
  log: Logger,
  setAdmissions: (admissions: readonly Admission[]) => void,
): LiveLimits {
  const now: { rate?: Admission | undefined; quotas?: Admission | undefined } = {};
  const push = () => setAdmissions([now.rate, now.quotas].filter((a) => a !== undefined));
  const rateLimits = new LiveRateLimits(config.sessions, diagnostics, log, (l) => {
    now.rate = l;
    push();
  });
  const quotas = new LiveQuotas(config.sessions, diagnostics, log, (q) => {
    now.quotas = q;
    push();
  });
  const names = (c: GatewayConfig) => c.upstreams.map((u) => u.name);
  rateLimits.set(config.rateLimits, names(config));
  quotas.set(config.quotas, names(config));
  return {
    apply(next, diff) {
      if (diff.rateLimits) rateLimits.set(next.rateLimits, names(next));
      if (diff.quotas) quotas.set(next.quotas, names(next));
    },
    quotaReport: () => quotas.report(),
    close: async () => {
      await Promise.all([rateLimits.close(), quotas.close()]);
    },
  };
}
