/**
 * Starts a real gateway in this process on a free loopback port, fronting the example stdio
 * upstreams (real child processes). Each test file starts what it needs and stops it.
 */
import { resolve } from 'node:path';
import { buildApp, type Gateway } from '../../src/app.js';
import { resolveConfig } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const ECHO_SERVER = resolve(ROOT, 'examples/echo/server.mjs');
export const SLOW_SERVER = resolve(ROOT, 'examples/slow/server.mjs');

export function stdioUpstream(
  name: string,
  script: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { name, transport: 'stdio', command: process.execPath, args: [script], ...extra };
}

/** A config with the two example upstreams; `overrides` are merged at the top level. */
export function exampleConfig(overrides: Record<string, unknown> = {}): GatewayConfig {
  return resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      upstreams: [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('slow', SLOW_SERVER)],
      ...overrides,
    },
    {},
  );
}

export interface RunningGateway {
  gateway: Gateway;
  /** The MCP endpoint, e.g. http://127.0.0.1:41234/mcp */
  url: URL;
  base: string;
  stop(): Promise<void>;
}

/** `env`: where the gateway reads OTEL_* (tracing) instead of process.env; `logger`: one the test reads. */
export async function startGateway(
  config: GatewayConfig = exampleConfig(),
  options: { env?: Record<string, string>; logger?: Logger } = {},
): Promise<RunningGateway> {
  const gateway = await buildApp(config, {
    logger: options.logger ?? createLogger(config.logLevel),
    defaultMetrics: false,
    ...(options.env ? { env: options.env } : {}),
  });
  const address = await gateway.app.listen({ host: '127.0.0.1', port: 0, backlog: config.listen.backlog });
  return {
    gateway,
    url: new URL(config.path, address),
    base: address,
    stop: () => gateway.close(),
  };
}

export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
} as const;

/** Opens a session by hand (no SDK) and returns its id. */
export async function openSession(url: URL, protocolVersion = '2025-06-18'): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: MCP_HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    }),
  });
  if (res.status !== 200) throw new Error(`initialize failed: ${res.status} ${await res.text()}`);
  const sid = res.headers.get('mcp-session-id');
  if (!sid) throw new Error('no session id');
  await res.text();
  await fetch(url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': protocolVersion },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return sid;
}

/** POSTs one raw body to the endpoint and returns status, headers and parsed JSON (if any). */
export async function post(
  url: URL,
  body: string | object,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** Whether a process id is still alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The text of a tools/call result's content (the SDK types a result as a wide union). */
export function toolText(result: unknown): string {
  const content = (result as { content?: Array<{ text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}
