// `GET /`: a newcomer who opens the gateway's address in a browser (or curls it) learns where the
// MCP endpoint is and what else answers, instead of a 404. Plain text, nothing secret: the paths
// are the config's, and every one of them answers anyone anyway (with its own checks).
import type { FastifyInstance } from 'fastify';

export interface RootPointerOptions {
  version: string;
  /** The main MCP endpoint (`path`). */
  path: string;
  /** The virtual servers' endpoints (servers[].path). */
  serverPaths: readonly string[];
  /** Legacy HTTP+SSE's stream path and WebSocket's, when on. */
  legacySse: string | undefined;
  websocket: string | undefined;
  /** Whether the status page is served (`status.enabled`). */
  status: boolean;
  /** Whether server cards are served (`serverCards.enabled`). */
  serverCards?: boolean;
}

/** The pointer's text: one line per thing a newcomer may look for. */
export function rootPointer(o: RootPointerOptions): string {
  const lines = [
    `mcp-gateway ${o.version}: an MCP gateway. This path serves no MCP; these do:`,
    `  MCP endpoint (Streamable HTTP, POST/GET/DELETE): ${o.path}`,
  ];
  if (o.serverPaths.length > 0) lines.push(`  virtual servers: ${o.serverPaths.join(', ')}`);
  if (o.legacySse) lines.push(`  legacy HTTP+SSE: ${o.legacySse}`);
  if (o.websocket) lines.push(`  WebSocket: ${o.websocket}`);
  if (o.status) lines.push('  status page: /status (and /status.json)');
  if (o.serverCards) lines.push('  server cards: <endpoint>/server-card, listed in /.well-known/ai-catalog.json');
  lines.push('  health: /healthz, readiness: /readyz, Prometheus metrics: /metrics');
  lines.push('  docs: the README.md shipped with mcp-gateway ("Try it with curl" is a first session)');
  return `${lines.join('\n')}\n`;
}

/** Registers `GET /` (and HEAD), unless the MCP endpoint itself is `/`. Other methods on `/` stay 404. */
export function registerRootPointer(app: FastifyInstance, o: RootPointerOptions): void {
  const paths = [o.path, ...o.serverPaths, o.legacySse, o.websocket];
  if (paths.includes('/')) return;
  const text = rootPointer(o);
  app.get('/', async (_request, reply) => reply.type('text/plain; charset=utf-8').send(text));
}
