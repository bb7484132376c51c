// @ts-check
// What the checks a call passes before and after its upstream cost, beside call-json in the same run:
// one rateLimits rule (it never refuses: the limit is far above the load) with the memory store and
// with Redis (counters where the sessions are), the guardrails (secrets + pii) on a 4 KB result, and a
// 20-rule Cedar policy (authorization.policyFile) deciding every call.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POOL, ECHO_SERVER, ROOT, poolLabel, startGateway } from '../lib/gateway.mjs';
import { startRedisServer } from '../lib/processes.mjs';
import { measureEchoCalls } from './call-json.mjs';

export const name = 'call-admitted';
export const kind = 'gateway';
export const description =
  'call-json without and with one rateLimits rule (memory store, then Redis), a 4 KB echo without and with the secrets + pii guardrails, and call-json under a 20-rule Cedar policy';

const RULE = { rules: [{ name: 'bench', key: 'principal', limit: 1_000_000_000, windowMs: 60_000 }] };
const GUARDRAILS = [{ name: 'secrets' }, { name: 'pii' }];
// 4 KB of prose-like text with digits and punctuation, nothing any detector takes for a finding.
const TEXT_4K = 'Order 2026-12-04 shipped to warehouse 17, ref ab-9931; status ok. '.repeat(63).slice(0, 4096);

/**
 * examples/policy/bench-20.cedar's 18 scope-and-name permits (none matches the bench's anonymous
 * client, all are read), a permit of the echo tools for anonymous clients, and a forbid on the hour
 * that never applies (the example's office-hours forbid would refuse a bench run in the evening):
 * 20 rules, each call allowed.
 */
function benchPolicy() {
  const permits = readFileSync(join(ROOT, 'examples/policy/bench-20.cedar'), 'utf8')
    .split('\n')
    .filter(
      (line, i, all) =>
        /^permit \(principal is Gw::Client/.test(line) ||
        (/^@id\("r\d+"\)$/.test(line) && /^permit \(principal is Gw::Client/.test(all[i + 1] ?? '')),
    );
  return [
    ...permits,
    '@id("anonymous-echo")',
    'permit (principal is Gw::Anonymous, action == Gw::Action::"callTool", resource) when { resource.name like "echo__*" };',
    '@id("never")',
    'forbid (principal, action, resource) when { context.hour > 23 };',
    '',
  ].join('\n');
}

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const rows = [];
  rows.push(...(await withStore(ctx, undefined, {}, 'no rule')));
  rows.push(...(await withStore(ctx, undefined, { rateLimits: RULE }, 'one rateLimits rule')));
  const { proc: redis, url: redisUrl } = await startRedisServer();
  try {
    const sessions = { store: 'redis', redisUrl, ttlSeconds: 3600 };
    rows.push(...(await withStore(ctx, { sessions, redisPid: redis.pid }, {}, 'Redis store, no rule')));
    rows.push(
      ...(await withStore(
        ctx,
        { sessions, redisPid: redis.pid },
        { rateLimits: RULE },
        'Redis store, one rateLimits rule',
      )),
    );
  } finally {
    await redis.stop();
  }
  rows.push(...(await withStore(ctx, undefined, {}, '4 KB result, guardrails off', TEXT_4K)));
  rows.push(
    ...(await withStore(ctx, undefined, { interceptors: GUARDRAILS }, '4 KB result, secrets + pii on', TEXT_4K)),
  );
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-bench-policy-'));
  try {
    const policyFile = join(dir, 'bench.cedar');
    writeFileSync(policyFile, benchPolicy());
    rows.push(...(await withStore(ctx, undefined, {}, 'no policy')));
    rows.push(...(await withStore(ctx, undefined, { authorization: { policyFile } }, '20-rule Cedar policy')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/**
 * @param {import('../run.mjs').Context} ctx
 * @param {{ sessions: Record<string, unknown>, redisPid: number | undefined } | undefined} redis
 * @param {Record<string, unknown>} extra  top-level config keys
 * @param {string} label
 * @param {string} [text]
 */
async function withStore(ctx, redis, extra, label, text) {
  const gw = await startGateway({
    upstreams: [{ name: 'echo', script: ECHO_SERVER }],
    ...(redis ? { sessions: redis.sessions } : {}),
    extra,
  });
  const redisPid = redis?.redisPid;
  return measureEchoCalls(ctx, gw, {
    scenario: name,
    variant: `pool ${poolLabel(DEFAULT_POOL)}, ${label}`,
    tool: 'echo__echo',
    ...(text === undefined ? {} : { text }),
    meters: { gateway: gw.gatewayPids, upstream: () => [...gw.upstreamPids(), ...(redisPid ? [redisPid] : [])] },
  });
}
