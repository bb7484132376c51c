/**
 * Whether this gateway traces, from the standard OTEL_* variables. Off unless
 * OTEL_TRACES_EXPORTER names `otlp` (or `console`): then the OpenTelemetry SDK is loaded
 * (tracer.ts, by a dynamic import) and subscribes to the data path's events. Off, nothing of it
 * is loaded and no request:start / upstream:call-start is even built (publishers test
 * `hasSubscribers` first).
 */
import type { Logger } from './logger.js';

export type TraceEnv = Readonly<Record<string, string | undefined>>;

export interface TracingSettings {
  exporter: 'otlp' | 'console';
  /** OTLP over HTTP: JSON or protobuf bodies (gRPC is not offered). */
  protocol: 'http/json' | 'http/protobuf';
  /** Where spans are POSTed (the signal's own endpoint, or the base endpoint + /v1/traces). */
  url: string;
  serviceName: string;
}

const DEFAULT_ENDPOINT = 'http://localhost:4318';

/** The settings the environment asks for; undefined when tracing is off; an Error when it asks for what we lack. */
export function tracingSettings(env: TraceEnv): TracingSettings | undefined | Error {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '' && e !== 'none');
  if (exporters.length === 0) return undefined;
  const exporter = exporters.includes('otlp') ? 'otlp' : exporters.includes('console') ? 'console' : undefined;
  if (!exporter)
    return new Error(`OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER}: only otlp, console and none are supported`);
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf')
    .trim()
    .toLowerCase();
  if (protocol !== 'http/json' && protocol !== 'http/protobuf')
    return new Error(`OTLP protocol ${protocol}: only http/json and http/protobuf are supported`);
  const signal = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = (env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || DEFAULT_ENDPOINT).replace(/\/+$/, '');
  return {
    exporter,
    protocol,
    url: signal || `${base}/v1/traces`,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'mcp-gateway',
  };
}

/**
 * Starts tracing for one gateway's events when the environment asks for it; returns what ends
 * it (flushing what is buffered), or undefined when off. A setting it cannot honour fails the
 * start: an operator who asked for traces must not silently get none.
 */
export async function startTracing(
  gateway: string,
  env: TraceEnv,
  log: Logger,
  version: string,
): Promise<(() => Promise<void>) | undefined> {
  const settings = tracingSettings(env);
  if (settings instanceof Error) throw settings;
  if (!settings) return undefined;
  const { traceGateway } = await import('./tracer.js');
  const stop = await traceGateway(gateway, settings, version);
  log.info(
    {
      exporter: settings.exporter,
      protocol: settings.protocol,
      url: settings.exporter === 'otlp' ? settings.url : undefined,
    },
    'tracing on',
  );
  return stop;
}
