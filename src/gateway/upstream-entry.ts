// One configured upstream as the virtual server's parts see it, whichever its sharing mode.
import { isObject } from '../jsonrpc/messages.js';
import type { UpstreamServerInfo } from '../contracts/upstream.js';
import type { UpstreamEntry } from '../upstream/group.js';

export type { UpstreamEntry };

/** What the upstream said at initialize; undefined while it is not up. */
export function upstreamInfo(entry: UpstreamEntry): UpstreamServerInfo | undefined {
  return entry.workers.info;
}

/** Whether the upstream lets clients subscribe to its resources. */
export function offersSubscriptions(info: UpstreamServerInfo | undefined): boolean {
  const resources = info?.capabilities.resources;
  return isObject(resources) && resources.subscribe === true;
}
