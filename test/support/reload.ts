/**
 * For config reload tests: config files a test rewrites (plain, or laid out as a Kubernetes
 * ConfigMap volume with its `..data` symlink swap), a gateway in this process built from such a
 * file, a gateway process's log lines, and its reload counter from /metrics.
 */
import type { ChildProcess } from 'node:child_process';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import type { RunningGateway } from './gateway.js';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './wait.js';

/** What every test config says besides its own keys (as spawnGateway's own file does). */
function withDefaults(config: Record<string, unknown>): Record<string, unknown> {
  return { listen: { host: '127.0.0.1', port: 0 }, logLevel: 'info', ...config };
}

/** A config file in a directory of its own. */
export function configFile(config: Record<string, unknown>): {
  file: string;
  write(config: Record<string, unknown> | string): void;
  remove(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-reload-'));
  const file = join(dir, 'gateway.json');
  // Written aside and renamed, as editors and config tools do: a reader never sees half a file.
  const write = (c: Record<string, unknown> | string) => {
    writeFileSync(`${file}.tmp`, typeof c === 'string' ? c : JSON.stringify(withDefaults(c)));
    renameSync(`${file}.tmp`, file);
  };
  write(config);
  return { file, write, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A gateway built in this process from a config file the test rewrites (`file.write`, then
 * `gateway.reload()` as SIGHUP would), listening on loopback. Its close, and the file's removal,
 * go into `cleanups`.
 */
export async function startFromFile(
  config: Record<string, unknown>,
  cleanups: Array<() => Promise<void>>,
): Promise<RunningGateway & { file: ReturnType<typeof configFile> }> {
  const file = configFile({ logLevel: 'silent', ...config });
  const loaded = loadConfig(file.file, {});
  const gateway = await buildApp(loaded, {
    logger: createLogger('silent'),
    defaultMetrics: false,
    configFile: file.file,
  });
  const address = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(async () => {
    await gateway.close();
    file.remove();
  });
  return { gateway, url: new URL(loaded.path, address), base: address, stop: () => gateway.close(), file };
}

/**
 * A ConfigMap volume as the kubelet lays it out: `gateway.json -> ..data/gateway.json`, `..data ->
 * ..<timestamp>/`. swap() writes a new timestamped directory, points `..data` at it by an atomic
 * rename of a new symlink, and removes the old directory.
 */
export function configMap(config: Record<string, unknown>): {
  file: string;
  swap(config: Record<string, unknown>): void;
  remove(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-configmap-'));
  let current: string | undefined;
  let n = 0;
  const swap = (c: Record<string, unknown>) => {
    const version = `..2026_12_01_12_00_00.${++n}`;
    mkdirSync(join(dir, version));
    writeFileSync(join(dir, version, 'gateway.json'), JSON.stringify(withDefaults(c)));
    symlinkSync(version, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    if (current) rmSync(join(dir, current), { recursive: true, force: true });
    current = version;
  };
  swap(config);
  symlinkSync('..data/gateway.json', join(dir, 'gateway.json'));
  return { file: join(dir, 'gateway.json'), swap, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The JSON log lines a gateway process writes on stdout from now on. */
export class LogLines {
  readonly lines: Array<Record<string, unknown>> = [];
  #partial = '';

  constructor(child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = this.#partial + chunk.toString();
      const parts = text.split('\n');
      this.#partial = parts.pop() ?? '';
      for (const line of parts) {
        try {
          this.lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // the "starting" and "listening" lines
        }
      }
    });
  }

  /** The first line, from index `from` on, whose msg contains `text`. */
  async waitFor(text: string, from = 0, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    let found: Record<string, unknown> | undefined;
    await until(
      `log line "${text}"`,
      () => (found = this.lines.slice(from).find((l) => String(l.msg).includes(text))) !== undefined,
      timeoutMs,
    );
    return found!;
  }
}

/** mcpgw_config_reloads_total{outcome} as /metrics says it now. */
export async function reloadCount(url: URL, outcome: 'ok' | 'rejected'): Promise<number> {
  const text = await (await fetch(new URL('/metrics', url))).text();
  const m = new RegExp(`^mcpgw_config_reloads_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text);
  if (!m) throw new Error(`no mcpgw_config_reloads_total{outcome="${outcome}"} in /metrics`);
  return Number(m[1]);
}
