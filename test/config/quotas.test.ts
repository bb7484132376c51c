/**
 * quotas as a config says it: what is refused at load (and so by --check and a reload), the
 * defaults, and the warnings of quotas whose globs select nothing (from the config alone and
 * from `checkConfig`, which lists the upstreams' tools).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import { quotaWarnings } from '../../src/config/quotas.js';
import type { QuotasConfig } from '../../src/config/schema.js';
import { checkConfig } from '../../src/gateway/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import { ECHO_SERVER, exampleConfig, stdioUpstream } from '../support/gateway.js';

const upstreams = [{ name: 'echo', transport: 'stdio', command: 'node' }];
const quota = (extra: Record<string, unknown>) => ({ name: 'q', window: 'day', calls: 10, ...extra });

function problems(quotas: unknown): string[] {
  try {
    resolveConfig({ upstreams, quotas }, {});
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('quotas: refused at load', () => {
  it.each([
    ['zero calls', quota({ calls: 0 }), 'calls'],
    ['negative calls', quota({ calls: -3 }), 'calls'],
    ['fractional calls', quota({ calls: 1.5 }), 'calls'],
    ['zero upstreamSeconds', quota({ upstreamSeconds: 0 }), 'upstreamSeconds'],
    ['negative upstreamSeconds', quota({ upstreamSeconds: -1 }), 'upstreamSeconds'],
    ['an unknown window', quota({ window: 'week' }), 'window'],
    ['no window', { name: 'q', calls: 1 }, 'window'],
    ['no name', { window: 'day', calls: 1 }, 'name'],
    ['a name with a space', quota({ name: 'a b' }), 'name'],
    ['a methods match (quotas count tool calls only)', quota({ match: { methods: ['tools/call'] } }), 'methods'],
    ['an empty tools list', quota({ match: { tools: [] } }), 'tools'],
  ])('%s', (_what, bad, field) => {
    const found = problems({ rules: [bad] });
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).toContain(field);
  });

  it('a quota that counts nothing, and names used twice', () => {
    expect(problems({ rules: [{ name: 'none', window: 'month' }] })).toEqual([
      'quotas.rules: "none" counts nothing: give calls, upstreamSeconds or both',
    ]);
    expect(problems({ rules: [quota({}), quota({ calls: 5 })] })).toContain('quotas.rules: the name "q" is used twice');
  });

  it('a bad onStoreError or topConsumers', () => {
    expect(problems({ rules: [quota({})], onStoreError: 'maybe' }).join('\n')).toContain('onStoreError');
    expect(problems({ rules: [quota({})], topConsumers: 0 }).join('\n')).toContain('topConsumers');
    expect(problems({ rules: [quota({})], topConsumers: 101 }).join('\n')).toContain('topConsumers');
  });

  it('takes a well-formed section, with its defaults', () => {
    const config = resolveConfig({ upstreams, quotas: { rules: [quota({ upstreamSeconds: 0.5 })] } }, {});
    expect(config.quotas).toEqual({
      rules: [{ name: 'q', window: 'day', calls: 10, upstreamSeconds: 0.5 }],
      onStoreError: 'allow',
      storeTimeoutMs: 250,
      topConsumers: 10,
    });
    expect(resolveConfig({ upstreams }, {}).quotas).toBeUndefined();
  });
});

describe('quotas: warnings', () => {
  const warn = (rules: unknown[], tools?: string[]) =>
    quotaWarnings(
      { rules, onStoreError: 'allow', storeTimeoutMs: 250, topConsumers: 10 } as QuotasConfig,
      ['echo', 'slow'],
      tools,
    );

  it('a servers glob that fits no upstream; a tools glob that fits no tool, when the tools are known', () => {
    expect(warn([quota({ match: { servers: ['ech*', 'mail*'] } })])).toEqual([
      'quotas rule "q": servers "mail*" fits no upstream',
    ]);
    const q = quota({ match: { tools: ['echo__*', 'nope'] } });
    expect(warn([q])).toEqual([]);
    expect(warn([q], ['echo__echo'])).toEqual(['quotas rule "q": tools "nope" fits no tool']);
  });

  it('checkConfig (--check) says them against the listed catalog', async () => {
    const rules = [
      { name: 'a', window: 'day', calls: 1, match: { servers: ['mail*'] } },
      { name: 'b', window: 'month', upstreamSeconds: 60, match: { tools: ['echo__echo', 'zzz*'] } },
    ];
    const config = exampleConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER)], quotas: { rules } });
    const { errors, warnings } = await checkConfig(config, { log: createLogger('silent') });
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      'quotas rule "a": servers "mail*" fits no upstream',
      'quotas rule "b": tools "zzz*" fits no tool',
    ]);
  }, 30_000);
});
