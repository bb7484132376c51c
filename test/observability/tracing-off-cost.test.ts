/**
 * Tracing off costs nothing on the hot path: a gateway process started without OTEL_* never
 * resolves an @opentelemetry module, even while serving calls (a module resolve hook reports
 * each one); with OTEL_TRACES_EXPORTER=otlp it does. `npm test` builds dist/ first.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, openSession, post } from '../support/gateway.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';

const HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent("export async function resolve(s, c, n) { const r = await n(s, c); if (r.url.includes('@opentelemetry')) process.stderr.write('RESOLVED ' + r.url + '\\\\n'); return r; }"));
`)}`;

async function resolvedWhileServing(env: Record<string, string>): Promise<string[]> {
  const child = spawn(
    process.execPath,
    ['--import', HOOK, resolve(ROOT, 'dist/main.js'), '--config', resolve(ROOT, 'examples/gateway.yaml')],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        MCPGW_PORT: '0',
        MCPGW_HOST: '127.0.0.1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    const url = await new Promise<URL>((ok, fail) => {
      let out = '';
      const timer = setTimeout(() => fail(new Error(`no listening line:\n${out}\n${stderr}`)), 20_000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        const m = /listening: MCP endpoint (\S+?)["\s]/.exec(out);
        if (m) {
          clearTimeout(timer);
          ok(new URL(m[1]!));
        }
      });
    });
    const sid = await openSession(url);
    const r = await post(
      url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'hi' } } },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(r.json.result.content[0].text).toBe('hi');
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return stderr.split('\n').filter((l) => l.startsWith('RESOLVED '));
}

describe('tracing off', () => {
  it('never loads the OpenTelemetry SDK; on, it does', async () => {
    expect(await resolvedWhileServing({})).toEqual([]);
    const receiver = await startOtlpReceiver();
    try {
      const on = await resolvedWhileServing(receiver.env);
      expect(on.some((l) => l.includes('@opentelemetry/sdk-trace'))).toBe(true);
      // SIGTERM drains and flushes: the spans of that call reached the receiver.
      expect(receiver.spans.some((s) => s.name === 'tools/call echo__echo')).toBe(true);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
