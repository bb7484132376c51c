/**
 * An OTLP/HTTP receiver on loopback, for tests: it takes POST /v1/traces, keeps JSON bodies'
 * spans (flattened, attributes as a plain object) and counts protobuf bodies, and answers 200.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** OTLP's SpanKind of the spans the gateway makes. */
export const SERVER_KIND = 2;
export const CLIENT_KIND = 3;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 SERVER, 3 CLIENT. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number };
  /** The resource's attributes (service.name…). */
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT), e.g. http://127.0.0.1:4318 */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every POST's path and content type, in order. */
  posts: Array<{ path: string; contentType: string; bytes: number }>;
  /** The OTEL_* settings of a gateway that exports its traces here, as OTLP/HTTP JSON. */
  env: Record<string, string>;
  close(): Promise<void>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

function attributes(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? [])
    out[key] = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const posts: OtlpReceiver['posts'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = req.headers['content-type'] ?? '';
      posts.push({ path: req.url ?? '', contentType, bytes: body.length });
      if (contentType.startsWith('application/json')) {
        const parsed = JSON.parse(body.toString('utf8')) as {
          resourceSpans?: Array<{
            resource?: { attributes?: OtlpAttribute[] };
            scopeSpans?: Array<{ spans?: Array<Record<string, any>> }>;
          }>;
        };
        for (const rs of parsed.resourceSpans ?? []) {
          const resource = attributes(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                kind: s.kind,
                attributes: attributes(s.attributes),
                status: s.status ?? {},
                resource,
              });
            }
          }
        }
      }
      res
        .writeHead(200, {
          'content-type': contentType.startsWith('application/json') ? 'application/json' : 'application/x-protobuf',
        })
        .end(contentType.startsWith('application/json') ? '{}' : '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    env: {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    },
    spans,
    posts,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
