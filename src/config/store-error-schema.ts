/**
 * What rate limits and quotas do when their counter store (Redis) fails or is late: one schema
 * fragment for both sections, each naming its own refusal.
 */

/** `onStoreError` and `storeTimeoutMs` for a section whose refusal is `refusal` (e.g. RATE_LIMITED). */
export function storeErrorProperties(o: {
  unit: 'call' | 'request';
  counters: string;
  refusal: string;
  logged: string;
}) {
  return {
    onStoreError: {
      enum: ['allow', 'deny'],
      default: 'allow',
      description:
        `When the counter store fails or takes longer than storeTimeoutMs: admit the ${o.unit}, or refuse it with ` +
        `${o.refusal} (data.storeError). ${o.logged}`,
    },
    storeTimeoutMs: {
      type: 'integer',
      minimum: 10,
      maximum: 10000,
      default: 250,
      description:
        `How long a ${o.unit} waits for its Redis ${o.counters} before onStoreError applies ` + '(restart to change).',
    },
  } as const;
}
