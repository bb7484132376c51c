/**
 * The `cluster` section: how many processes serve the one port (node:cluster). Each worker is a
 * whole gateway, a replica as another pod would be: it shares sessions with the others only
 * through Redis, so with the memory store there must be exactly one.
 */
import { availableParallelism } from 'node:os';
import type { FromSchema } from 'json-schema-to-ts';

export const clusterSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Gateway processes on the one port (node:cluster): see docs/replicas-and-reload.md.',
  properties: {
    workers: {
      anyOf: [
        { type: 'integer', minimum: 1, maximum: 256 },
        { type: 'string', const: 'auto' },
      ],
      default: 1,
      description:
        'A number, or "auto": one per core this process may use (os.availableParallelism()). Each worker is a ' +
        'replica, so more than 1 needs sessions.store redis.',
    },
  },
  required: [],
  default: {},
} as const;

export type ClusterConfig = FromSchema<typeof clusterSchema>;

/** How many worker processes `cluster` asks for on this machine. */
export function workerCount(cluster: ClusterConfig | undefined): number {
  const workers = cluster?.workers ?? 1;
  return workers === 'auto' ? Math.max(1, availableParallelism()) : workers;
}

/**
 * Sessions in memory live in one process: a second worker would not know the first one's. So
 * the memory store allows only 1 (said so, not "auto", which could be 1 on one machine and not
 * on the next).
 */
export function clusterChecks(cluster: unknown, store: unknown, problems: string[]): void {
  if (typeof cluster !== 'object' || cluster === null) return;
  const workers = (cluster as { workers?: unknown }).workers;
  if (workers === undefined || workers === 1) return;
  if (store !== 'redis') {
    problems.push(
      `cluster.workers: ${JSON.stringify(workers)} needs sessions.store redis (the memory store holds sessions ` +
        `in one process: workers must be 1)`,
    );
  }
}
