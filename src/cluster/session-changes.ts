/**
 * Session records changed between replicas: a replica that changes or deletes a record says so
 * on SESSION_CHANGES_CHANNEL, and every replica drops its cached copy. A lost message leaves a
 * copy stale for at most the cache's age limit (session/cached-store.ts).
 */
import type { Bus } from './bus.js';
import { SESSION_CHANGES_CHANNEL, decodeSessionChange, encodeSessionChange } from './bus-messages.js';

export function announceSessionChange(bus: Bus, sessionId: string): Promise<void> {
  return bus.publish(SESSION_CHANGES_CHANNEL, encodeSessionChange({ sessionId }));
}

/** Resolves once this replica hears changes; the returned function stops it. */
export function subscribeSessionChanges(bus: Bus, onChange: (sessionId: string) => void): Promise<() => Promise<void>> {
  return bus.subscribe(SESSION_CHANGES_CHANNEL, (raw) => {
    const change = decodeSessionChange(raw);
    if (change) onChange(change.sessionId);
  });
}
