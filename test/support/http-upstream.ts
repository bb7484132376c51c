/**
 * Remote MCP servers for tests, each a real child process on a loopback port: our SDK-based
 * examples/echo-http, and @modelcontextprotocol/server-everything in its `streamableHttp` or
 * legacy `sse` mode (bound to 127.0.0.1 by test/support/loopback-only.mjs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileLines } from './file-lines.js';
import { ROOT } from './gateway.js';

const require = createRequire(import.meta.url);
export const ECHO_HTTP_SERVER = resolve(ROOT, 'examples/echo-http/server.mjs');
export const CONFORMANCE_SERVER = resolve(ROOT, 'examples/conformance/server.mjs');
export const CONFORMANCE_HTTP_SERVER = resolve(ROOT, 'examples/conformance/http.mjs');
export const MODERN_SERVER = resolve(ROOT, 'examples/modern/server.mjs');
export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const LOOPBACK_ONLY = resolve(ROOT, 'test/support/loopback-only.mjs');

export interface HttpServerProcess {
  /** The MCP endpoint (Streamable HTTP) or the SSE endpoint (legacy). */
  url: string;
  port: number;
  pid: number;
  /** Ends the process now (SIGKILL) and waits for it. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL; waits for the exit. Safe to call twice. */
  stop(): Promise<void>;
}

interface SpawnSpec {
  args: string[];
  env?: Record<string, string>;
  /** The URL from a line of output, once the server listens. */
  ready: (line: string) => string | undefined;
}

function start(spec: SpawnSpec): Promise<HttpServerProcess> {
  const child: ChildProcess = spawn(process.execPath, spec.args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let exited = child.exitCode !== null;
  const exit = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
  const stopWith = async (signal: NodeJS.Signals) => {
    if (exited) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exit;
    clearTimeout(timer);
  };
  return new Promise((resolvePromise, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within 20 s:\n${output}`));
    }, 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      for (const line of output.split('\n')) {
        const url = spec.ready(line);
        if (url === undefined) continue;
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        // Keep draining the pipes, or a chatty server blocks on a full one.
        child.stdout!.resume();
        child.stderr!.resume();
        resolvePromise({
          url,
          port: Number(new URL(url).port),
          pid: child.pid!,
          kill: () => stopWith('SIGKILL'),
          stop: () => stopWith('SIGTERM'),
        });
        return;
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
}

/**
 * What an echo-http started with `--record FILE` received, every JSON-RPC message in order (a
 * batch as its messages): the upstream's own view of what reached it.
 */
export function readRecording(file: string): any[] {
  return fileLines(file).flatMap((line) => JSON.parse(line) as unknown);
}

export const WORD_FILTER = resolve(ROOT, 'examples/interceptors/word-filter.mjs');

/** examples/interceptors/word-filter over Streamable HTTP on a free port. */
export function startWordFilterHttp(extraArgs: string[] = []): Promise<HttpServerProcess> {
  return start({
    args: [WORD_FILTER, '--http', ...extraArgs],
    ready: (line) => /^listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(line.trim())?.[1],
  });
}

/** examples/echo-http on `port` (0: a free one). */
export function startEchoHttp(port = 0, extraArgs: string[] = []): Promise<HttpServerProcess> {
  return start({
    args: [ECHO_HTTP_SERVER, '--port', String(port), ...extraArgs],
    ready: (line) => /^listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(line.trim())?.[1],
  });
}

/** server-everything in `streamableHttp` (endpoint /mcp) or legacy `sse` (endpoint /sse) mode. */
export function startEverything(mode: 'streamableHttp' | 'sse', port = 0): Promise<HttpServerProcess> {
  return start({
    args: ['--import', LOOPBACK_ONLY, EVERYTHING, mode],
    env: { PORT: String(port) },
    ready: (line) => {
      const m = /^LOOPBACK_LISTENING (\d+)$/.exec(line.trim());
      return m ? `http://127.0.0.1:${m[1]}/${mode === 'sse' ? 'sse' : 'mcp'}` : undefined;
    },
  });
}

/** A remote upstream's config entry, with test-sized resilience settings unless overridden. */
export function httpUpstream(name: string, url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    transport: 'http',
    url,
    connectTimeoutMs: 2000,
    timeoutMs: 5000,
    retry: { attempts: 2, initialDelayMs: 20, maxDelayMs: 100 },
    breaker: { failureThreshold: 3, openMs: 300, maxOpenMs: 1000 },
    health: { intervalMs: 500, timeoutMs: 1000 },
    ...extra,
  };
}

/** examples/conformance/http.mjs: the conformance fixture over Streamable HTTP, one child per session. */
export function startConformanceHttp(port = 0): Promise<HttpServerProcess> {
  return start({
    args: [CONFORMANCE_HTTP_SERVER, '--port', String(port)],
    ready: (line) => /^listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(line.trim())?.[1],
  });
}

/** examples/modern/server.mjs: the 2026-07-28-only fixture (`--discover-fails` and the like in `extraArgs`). */
export function startStatelessFixture(extraArgs: string[] = [], port = 0): Promise<HttpServerProcess> {
  return start({
    args: [MODERN_SERVER, '--port', String(port), ...extraArgs],
    ready: (line) => /^modern fixture listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(line.trim())?.[1],
  });
}

/** test/fixtures/skills-server.mjs as a 2026-07-28 server over HTTP (SEP-2640 skills), its set as `env` says. */
export function startSkillsHttp(env: Record<string, string>): Promise<HttpServerProcess> {
  return start({
    args: [resolve(ROOT, 'test/fixtures/skills-server.mjs')],
    env: { ...env, SKILLS_HTTP: '1' },
    ready: (line) => /^skills fixture listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(line.trim())?.[1],
  });
}
