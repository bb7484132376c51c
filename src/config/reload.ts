/** The `reload` section: what makes the gateway load its config file again (SIGHUP always does). */
import type { FromSchema } from 'json-schema-to-ts';

export const reloadSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'What reloads the config file besides SIGHUP, which always does: see docs/replicas-and-reload.md.',
  properties: {
    watch: {
      type: 'boolean',
      default: true,
      description:
        "Also reload on a change of the file's content. Its directory is watched, not the file, so an editor's " +
        'rename and a Kubernetes ConfigMap swap (the ..data symlink) count. false: only SIGHUP reloads.',
    },
    debounceMs: {
      type: 'integer',
      minimum: 10,
      maximum: 60000,
      default: 300,
      description: 'Quiet time after the last change event before the file is read and compared.',
    },
    pollSeconds: {
      type: 'integer',
      minimum: 0,
      maximum: 86400,
      default: 10,
      description:
        "The content's SHA-256 is also compared this often without an event (file systems that send none); 0: never.",
    },
  },
  required: [],
  default: {},
} as const;

export type ReloadConfig = FromSchema<typeof reloadSchema>;
