// @ts-check
// call-json with tracing off (OTEL_TRACES_EXPORTER=none) and on: OTLP/HTTP JSON and protobuf to a
// receiver on loopback (baselines/otlp-sink.mjs), every request sampled (no parent: new traces).
// What a SERVER and a CLIENT span per call, and their export, cost beside the untraced gateway.
import { join } from 'node:path';
import { DEFAULT_POOL, ECHO_SERVER, ROOT, poolLabel, startGateway } from '../lib/gateway.mjs';
import { start } from '../lib/processes.mjs';
import { measureEchoCalls } from './call-json.mjs';

export const name = 'call-traced';
export const kind = 'gateway';
export const description =
  'call-json with tracing off, and on (OTLP/HTTP JSON, then protobuf, to a loopback receiver); and off at logLevel info (the access log on)';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  return [
    ...(await runWith(ctx, undefined)),
    ...(await runWith(ctx, 'http/json')),
    ...(await runWith(ctx, 'http/protobuf')),
    // The gateway's default logLevel: one access line per request, to a pipe the bench drains.
    ...(await runWith(ctx, undefined, 'info')),
  ];
}

/**
 * @param {import('../run.mjs').Context} ctx
 * @param {'http/json' | 'http/protobuf' | undefined} protocol  undefined: tracing off
 * @param {string} [logLevel]  the bench's default is warn (no access log)
 */
async function runWith(ctx, protocol, logLevel = 'warn') {
  const sink = protocol
    ? await start({
        name: 'otlp-sink',
        command: process.execPath,
        args: [join(ROOT, 'load/baselines/otlp-sink.mjs')],
        ready: /otlp sink listening on (\S+)/,
      })
    : undefined;
  try {
    const env = sink
      ? {
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_EXPORTER_OTLP_ENDPOINT: /** @type {RegExpExecArray} */ (sink.match)[1],
        }
      : { OTEL_TRACES_EXPORTER: 'none' };
    const gw = await startGateway({ upstreams: [{ name: 'echo', script: ECHO_SERVER }], env, logLevel });
    const sinkPid = sink?.proc.pid;
    return await measureEchoCalls(ctx, gw, {
      scenario: name,
      variant: `pool ${poolLabel(DEFAULT_POOL)}, tracing ${protocol ? `on (OTLP ${protocol})` : 'off'}${logLevel === 'warn' ? '' : `, logLevel ${logLevel}`}`,
      tool: 'echo__echo',
      // The receiver's CPU counts with the upstream's, as Redis's does in call-redis.
      meters: { gateway: gw.gatewayPids, upstream: () => [...gw.upstreamPids(), ...(sinkPid ? [sinkPid] : [])] },
    });
  } finally {
    await sink?.proc.stop();
  }
}
