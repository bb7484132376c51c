/**
 * Cancellation across replicas: without affinity, a client's notifications/cancelled may reach
 * a replica that does not hold the request. That replica publishes it on CANCEL_CHANNEL, and
 * every replica cancels the request if it holds it (at most one does).
 */
import type { Logger } from '../observability/logger.js';
import type { Bus } from './bus.js';
import { CANCEL_CHANNEL, decodeRemoteCancel, encodeRemoteCancel, type RemoteCancel } from './bus-messages.js';

export type { RemoteCancel } from './bus-messages.js';

/** Fire and forget: a lost cancellation leaves the request to its own deadline. */
export function publishRemoteCancel(bus: Bus, cancel: RemoteCancel): void {
  bus.publish(CANCEL_CHANNEL, encodeRemoteCancel(cancel)).catch(() => undefined);
}

/** Resolves once this replica hears cancellations; the returned function stops it. */
export function subscribeRemoteCancels(
  bus: Bus,
  log: Logger,
  onCancel: (cancel: RemoteCancel) => void,
): Promise<() => Promise<void>> {
  return bus.subscribe(CANCEL_CHANNEL, (raw) => {
    const cancel = decodeRemoteCancel(raw);
    if (cancel) onCancel(cancel);
    else log.warn('unreadable cancellation on the bus');
  });
}
