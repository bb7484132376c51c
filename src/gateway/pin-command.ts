// `mcpgw pin --config FILE`: starts the configured upstreams (as --check does: nothing served),
// lists their tools and prompts, and writes the pin lock with their digests, reporting what
// changed. An upstream that does not come up keeps the pins it had: a pin is never dropped
// because its upstream was down.
import { writeFileSync, renameSync } from 'node:fs';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import { formatLock, readLockFile, type UpstreamPins } from '../config/pin-lock.js';
import { pinsOf, updateLock, type PinChange } from '../config/pin-diff.js';
import { listingParts } from './config-check.js';

export interface PinOutcome {
  file: string;
  changes: PinChange[];
  /** Upstreams that did not list what they offer in time: their pins were kept as they were. */
  missing: string[];
}

export class PinCommandError extends Error {}

/** Lists every upstream and writes the lock `config.pinning.lockFile` names; the upstreams are stopped after. */
export async function pinDefinitions(
  config: GatewayConfig,
  options: { log: Logger; deadlineMs?: number },
): Promise<PinOutcome> {
  const file = config.pinning?.lockFile;
  if (!file) throw new PinCommandError('pinning.lockFile is not set: there is no lock to write');
  const lock = readLockFile(file);
  const { group, catalogs, tokens } = listingParts(config, options.log);
  let timer: NodeJS.Timeout | undefined;
  const deadlineMs = options.deadlineMs ?? 30_000;
  const late = new Promise<void>((r) => {
    timer = setTimeout(r, deadlineMs);
  });
  try {
    const started = catalogs.start();
    started.catch(() => undefined);
    await Promise.race([started, late]);
    const current = new Map<string, UpstreamPins>();
    const missing: string[] = [];
    for (const u of config.upstreams) {
      const lists = catalogs.listsOf(u.name)?.lists;
      if (lists) current.set(u.name, pinsOf(lists));
      else missing.push(u.name);
    }
    const updated = updateLock(lock, current);
    // Written whole then renamed: a replica reloading meanwhile reads the old lock or the new one, never half.
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, formatLock(updated.lock));
    renameSync(temp, file);
    return { file, changes: updated.changes, missing };
  } finally {
    clearTimeout(timer);
    await group.close().catch(() => undefined);
    await tokens.close();
  }
}
