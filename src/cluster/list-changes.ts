/**
 * List changes between replicas: a per-session worker's list_changed reaches only the replica
 * running it, yet every replica keeps that session's lists (and a shared catalog of its own,
 * and GET streams that must hear of it). The replica that hears one says so on
 * LIST_CHANGES_CHANNEL and every other replica acts on it as if it had heard it itself. A lost
 * message leaves a session's kept lists stale for at most their age limit (session-catalogs.ts).
 */
import type { Logger } from '../observability/logger.js';
import type { Bus } from './bus.js';
import { LIST_CHANGES_CHANNEL, decodeListChange, encodeListChange, type ListChange } from './bus-messages.js';

export type { ListChange } from './bus-messages.js';

/** Fire and forget, as a cancellation. */
export function announceListChange(bus: Bus, change: Omit<ListChange, 'replica'>): void {
  bus.publish(LIST_CHANGES_CHANNEL, encodeListChange({ replica: bus.replicaId, ...change })).catch(() => undefined);
}

/** Resolves once this replica hears the other replicas' list changes (not its own); the returned function stops it. */
export function subscribeListChanges(
  bus: Bus,
  log: Logger,
  onChange: (change: ListChange) => void,
): Promise<() => Promise<void>> {
  return bus.subscribe(LIST_CHANGES_CHANNEL, (raw) => {
    const change = decodeListChange(raw);
    if (!change) return log.warn('unreadable list change on the bus');
    if (change.replica !== bus.replicaId) onChange(change);
  });
}
