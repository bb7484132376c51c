/** The `reload` section: what makes the gateway load its config file again (SIGHUP always does). */
import type { FromSchema } from 'json-schema-to-ts';

export const reloadSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Watch the file's directory (a Kubernetes ConfigMap update swaps a symlink there). false:
    // only SIGHUP reloads.
    watch: { type: 'boolean', default: true },
    // Quiet time after the last change event before the file is read and compared.
    debounceMs: { type: 'integer', minimum: 10, maximum: 60000, default: 300 },
    // The content is also compared this often without an event (file systems that send none); 0: never.
    pollSeconds: { type: 'integer', minimum: 0, maximum: 86400, default: 10 },
  },
  required: [],
  default: {},
} as const;

export type ReloadConfig = FromSchema<typeof reloadSchema>;
