// Types of scripts/gen-docs.mjs, for the tests that run it (test/docs/generated.test.ts).
export interface DocsInputs {
  schema: unknown;
  codeDefaults: Record<string, unknown>;
  liveSections: ReadonlySet<string>;
  liveLimits: ReadonlySet<string>;
  policyKeys: ReadonlySet<string>;
}
export const GENERATED: string[];
export function inputsFrom(modules: { schema: unknown; server: unknown; diff: unknown }): DocsInputs;
export function renderConfigurationMd(inputs: DocsInputs): string;
export function renderJsonSchema(inputs: DocsInputs): string;
export function generatedFiles(inputs: DocsInputs): Array<{ path: string; text: string }>;
export function staleFiles(inputs: DocsInputs, root?: string): string[];
