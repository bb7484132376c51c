/**
 * No false positives on real servers' results (issue 33): every tool of the official
 * @modelcontextprotocol/server-everything that answers without asking its client anything,
 * called through a gateway with both built-in guardrails on and redacting (`secrets`, `pii`), gives
 * the result it gives through the same gateway without them, and no guardrail found anything. (The
 * conformance suite's payloads: scripts/conformance.sh with CONFORMANCE_GUARDRAILS=1, a CI run.)
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, everythingUpstream } from '../support/everything.js';
import { exampleConfig, startGateway, type RunningGateway } from '../support/gateway.js';
import { sample } from '../support/metrics.js';
import { findPii } from '../../src/guardrails/pii-scanner.js';
import { findSecrets } from '../../src/guardrails/secrets-scanner.js';

/** Arguments for each tool that answers on its own; no network (gzip takes a data: URI). */
const CALLS: Record<string, Record<string, unknown>> = {
  echo: { message: 'Meet at 10:30 in room 4.12, bring the 2026-12-04 report (v2.10.3).' },
  'get-annotated-message': { messageType: 'error', includeImage: true },
  'get-env': {},
  'get-resource-links': { count: 10 },
  'get-resource-reference': { resourceType: 'Blob', resourceId: 7 },
  'get-structured-content': { location: 'New York' },
  'get-sum': { a: 1733280000000, b: 4111 },
  'get-tiny-image': {},
  'gzip-file-as-resource': {
    name: 'notes.txt.gz',
    data: `data:text/plain;base64,${Buffer.from('release notes\n'.repeat(20)).toString('base64')}`,
    outputType: 'resource',
  },
  'toggle-simulated-logging': {},
  'toggle-subscriber-updates': {},
  'trigger-long-running-operation': { duration: 0.2, steps: 2 },
};
/** The tools that ask the client something (sampling, elicitation, roots) or run as tasks: not here. */
const ASKING = /^(trigger-(sampling|elicitation|url-elicitation)|get-roots-list|simulate-research-query)/;

/** Which built-ins found something real in get-env's result: this machine's environment, which may hold a token. */
const realFindings = new Set<string>();

let plain: RunningGateway;
let guarded: RunningGateway;
const clients: Client[] = [];

beforeAll(async () => {
  plain = await startGateway(exampleConfig({ upstreams: [everythingUpstream('ev', { prefix: '' })] }));
  guarded = await startGateway(
    exampleConfig({
      upstreams: [everythingUpstream('ev', { prefix: '' })],
      interceptors: [
        { name: 'secrets', action: 'redact' },
        { name: 'pii', action: 'redact' },
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await plain?.stop();
  await guarded?.stop();
});

async function client(gw: RunningGateway): Promise<Client> {
  const { client: c } = await connectClient(gw.url);
  clients.push(c);
  return c;
}

describe("server-everything's results with secrets and pii on", () => {
  it('every tool that answers on its own is called here (none left out)', async () => {
    const { tools } = await (await client(guarded)).listTools();
    const names = tools.map((t) => t.name).filter((n) => !ASKING.test(n));
    expect(names.sort()).toEqual(Object.keys(CALLS).sort());
  });

  it.each(Object.entries(CALLS))('%s: the same result as without guardrails', async (name, args) => {
    const [a, b] = await Promise.all([client(plain), client(guarded)]);
    const [without, withGuards] = await Promise.all([
      a.callTool({ name, arguments: args }),
      b.callTool({ name, arguments: args }),
    ]);
    if (name === 'get-env') {
      const text = JSON.stringify(without);
      if (findSecrets(text).length > 0) realFindings.add('secrets');
      if (findPii(text).length > 0) realFindings.add('pii');
      // A real secret in the environment is redacted, as it should be: not a false positive.
      if (realFindings.size > 0) return;
    }
    expect(JSON.stringify(withGuards)).not.toContain('[REDACTED:');
    expect(withGuards).toEqual(without);
  });

  it('no guardrail found anything: every verdict a pass', async () => {
    const metrics = await (await fetch(new URL('/metrics', guarded.base))).text();
    for (const interceptor of ['secrets', 'pii']) {
      // Arguments and result of each call.
      expect(
        sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor, verdict: 'pass' }),
      ).toBeGreaterThanOrEqual(2 * Object.keys(CALLS).length);
      const redacted = sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor, verdict: 'redacted' });
      expect(redacted).toBe(realFindings.has(interceptor) ? 1 : 0);
    }
  });
});
