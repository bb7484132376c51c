/**
 * Spans after OpenTelemetry's MCP semantic conventions, made from the data path's events (loaded
 * by tracing.ts only when tracing is on). Per request the virtual server answers, a SERVER span
 * `{mcp.method.name} {target}` continuing the client's trace context; per call to an upstream, a
 * CLIENT span, its child, whose context the dispatcher sends on in `params._meta` (and an HTTP
 * upstream's wire in its headers). Notifications get spans too (notificationSpans). Spans are kept by their start
 * event's object, in WeakMaps:
 * nothing is threaded through calls, and nothing leaks when an end is never heard.
 */
import { createHash } from 'node:crypto';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { subscribe, type NotificationPassed, type RequestStart, type UpstreamCallStart } from './events.js';
import type { TracingSettings } from './tracing.js';

type Carrier = Record<string, string | undefined>;

const getter: TextMapGetter<Carrier> = {
  keys: (c) => Object.keys(c),
  get: (c, key) => c[key],
};

const setter: TextMapSetter<Carrier> = {
  set: (c, key, value) => {
    c[key] = value;
  },
};

async function exporterFor(settings: TracingSettings): Promise<SpanExporter> {
  if (settings.exporter === 'console') return new ConsoleSpanExporter();
  // The 0.223 line: the newest that runs on Node 20 (0.300 and later need Node 22.15).
  if (settings.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter({ url: settings.url });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: settings.url });
}

/** A session id is a credential of sorts: spans carry a digest that correlates, never the id. */
function sessionDigest(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 32);
}

/** One gateway's tracer provider and its subscription; the returned function flushes and ends both. */
export async function traceGateway(
  gateway: string,
  settings: TracingSettings,
  version: string,
): Promise<() => Promise<void>> {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': version }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over our defaults.
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter: await exporterFor(settings) })],
  });
  const tracer = provider.getTracer('mcp-gateway', version);
  const propagator = new W3CTraceContextPropagator();
  const servers = new WeakMap<RequestStart, Span>();
  const clients = new WeakMap<UpstreamCallStart, Span>();

  const unsubscribe = subscribe(gateway, {
    'request:start': (e) => {
      const parent = e.traceparent
        ? propagator.extract(ROOT_CONTEXT, { traceparent: e.traceparent, tracestate: e.tracestate }, getter)
        : ROOT_CONTEXT;
      const attributes: Attributes = {
        'mcp.method.name': e.method,
        'jsonrpc.request.id': e.jsonrpcId,
        'network.transport': 'tcp',
      };
      if (e.protocolVersion) attributes['mcp.protocol.version'] = e.protocolVersion;
      if (e.sessionId) attributes['mcp.session.id'] = sessionDigest(e.sessionId);
      if (e.resourceUri !== undefined) attributes['mcp.resource.uri'] = e.resourceUri;
      targetAttributes(attributes, e.method, e.target);
      servers.set(e, tracer.startSpan(spanName(e.method, e.target), { kind: SpanKind.SERVER, attributes }, parent));
    },
    'request:end': (e) => {
      const span = e.start && servers.get(e.start);
      if (!span) return;
      // initialize learns its version only as it answers.
      if (e.start?.protocolVersion) span.setAttribute('mcp.protocol.version', e.start.protocolVersion);
      // A request that became another tool's call (call_tool's, a view's rename) is named by the tool it ran.
      if (e.tool && e.start && e.tool !== e.start.target) {
        const named: Attributes = {};
        targetAttributes(named, e.method, e.tool);
        span.updateName(spanName(e.method, e.tool)).setAttributes(named);
      }
      const errorType = e.toolError ? 'tool_error' : e.errorCode;
      if (errorType) {
        span.setAttribute('error.type', errorType);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
    'upstream:call-start': (e) => {
      const server = e.request && servers.get(e.request);
      const parent = server ? trace.setSpan(ROOT_CONTEXT, server) : ROOT_CONTEXT;
      const attributes: Attributes = {
        'mcp.method.name': e.method,
        'network.transport': e.transport,
        'mcpgw.upstream': e.upstream,
      };
      if (e.request) attributes['jsonrpc.request.id'] = e.request.jsonrpcId;
      targetAttributes(attributes, e.method, e.target);
      const span = tracer.startSpan(spanName(e.method, e.target), { kind: SpanKind.CLIENT, attributes }, parent);
      clients.set(e, span);
      const carrier: Carrier = {};
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, setter);
      e.traceparent = carrier.traceparent;
      if (carrier.tracestate) e.tracestate = carrier.tracestate;
    },
    'upstream:call-end': (e) => {
      const span = e.start && clients.get(e.start);
      if (!span) return;
      if (e.errorType) {
        span.setAttribute('error.type', e.errorType);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
    notification: (e) => notificationSpans(tracer, propagator, e),
  });

  return async () => {
    unsubscribe();
    await provider.shutdown();
  };
}

/**
 * A notification has no answer: its spans end as they start. A client's is a SERVER span (the
 * gateway receives it); an upstream's a SERVER span too (the gateway, its client, receives what
 * the server initiated), and, passed on, a CLIENT span under it (the gateway initiates it to its client).
 */
function notificationSpans(tracer: Tracer, propagator: W3CTraceContextPropagator, e: NotificationPassed): void {
  const parent = e.traceparent
    ? propagator.extract(ROOT_CONTEXT, { traceparent: e.traceparent, tracestate: e.tracestate }, getter)
    : ROOT_CONTEXT;
  const toClient: Attributes = { 'mcp.method.name': e.method, 'network.transport': 'tcp' };
  if (e.sessionId) toClient['mcp.session.id'] = sessionDigest(e.sessionId);
  if (e.protocolVersion) toClient['mcp.protocol.version'] = e.protocolVersion;
  if (e.upstream === undefined)
    return tracer.startSpan(e.method, { kind: SpanKind.SERVER, attributes: toClient }, parent).end();
  const attributes: Attributes = {
    'mcp.method.name': e.method,
    'network.transport': e.transport,
    'mcpgw.upstream': e.upstream,
  };
  const received = tracer.startSpan(e.method, { kind: SpanKind.SERVER, attributes }, parent);
  if (e.delivered)
    tracer
      .startSpan(e.method, { kind: SpanKind.CLIENT, attributes: toClient }, trace.setSpan(ROOT_CONTEXT, received))
      .end();
  received.end();
}

function spanName(method: string, target: string): string {
  return target ? `${method} ${target}` : method;
}

function targetAttributes(attributes: Attributes, method: string, target: string): void {
  if (!target) return;
  if (method === 'tools/call') {
    attributes['gen_ai.tool.name'] = target;
    attributes['gen_ai.operation.name'] = 'execute_tool';
  } else if (method === 'prompts/get') {
    attributes['gen_ai.prompt.name'] = target;
  }
}
