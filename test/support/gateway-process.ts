/**
 * A gateway as its own OS process (`node dist/main.js`), for tests that kill a replica.
 * `npm test` builds dist/ first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { childrenOf } from './child-processes.js';
import { ROOT } from './gateway.js';

export const MAIN = resolve(ROOT, 'dist/main.js');

export interface GatewayProcess {
  readonly url: URL;
  /** The config file it was started with (a test may rewrite it and reload). */
  readonly file: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** SIGTERM and wait for the exit (SIGKILL after 15 s). */
  stop(): Promise<void>;
  /** SIGKILL, and its upstreams' process groups with it. */
  kill9(): void;
  readonly exited: Promise<number | null>;
  /** What it wrote to stdout so far (its own lines and, as JSON lines, its log). */
  output(): string;
}

function writeConfig(config: Record<string, unknown>): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-'));
  const file = join(dir, 'gateway.json');
  writeFileSync(file, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, logLevel: 'warn', ...config }));
  return { dir, file };
}

/**
 * Resolves once the gateway serves MCP (its "listening" line), or with `until: 'bound'` as soon
 * as its port is bound (its "starting" line: /healthz answers, the upstreams are still starting).
 */
export async function spawnGateway(
  config: Record<string, unknown>,
  options: { until?: 'ready' | 'bound'; configFile?: string; nodeArgs?: string[] } = {},
): Promise<GatewayProcess> {
  // With `configFile`, the test wrote the file (its layout matters: a ConfigMap's symlinks) and removes it.
  const { dir, file } = options.configFile ? { dir: undefined, file: options.configFile } : writeConfig(config);
  const path = typeof config.path === 'string' ? config.path : '/mcp';
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), MAIN, '--config', file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '' },
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  let out = '';
  const url = await new Promise<URL>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${stderr}`)), 30_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m =
        options.until === 'bound' ? /starting: health on (\S+)/.exec(out) : /listening: MCP endpoint (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveUrl(options.until === 'bound' ? new URL(path, m[1]!) : new URL(m[1]!));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}: ${stderr}`));
    });
  });
  return {
    url,
    file,
    pid: child.pid!,
    child,
    exited,
    output: () => out,
    kill9: () => {
      // As when a pod dies: its upstreams (each in its own process group) go with it, rather than
      // living on re-parented to init.
      const upstreams = childrenOf(child.pid!);
      child.kill('SIGKILL');
      for (const pid of upstreams) killGroup(pid);
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(t);
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs a gateway that is expected to exit by itself (a start-up that fails); SIGKILL after `timeoutMs`. */
export async function runGatewayToExit(
  config: Record<string, unknown>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { dir, file } = writeConfig(config);
  const child = spawn(process.execPath, [MAIN, '--config', file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(killer);
  rmSync(dir, { recursive: true, force: true });
  return { code, stdout, stderr };
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* gone already */
  }
}

export { childrenOf };
