/**
 * `cluster.workers` > 1: this process becomes the primary of a node:cluster and does no MCP
 * work itself. Each worker is a whole gateway (main.ts, as a replica: sessions in Redis, calls
 * for a session owned elsewhere forwarded over the bus); they share the one listening socket,
 * which the primary hands out connection by connection (node's round-robin scheduling).
 *
 * Signals reach the primary (a container's PID 1, a service manager): it passes them on over
 * IPC, so a worker sees each once, whatever its process group got too.
 * - SIGTERM / SIGINT: every worker drains and closes as a single gateway would; the primary
 *   exits when they all have (non-zero if one did not exit cleanly). A second signal kills them.
 * - SIGHUP: every worker reloads its config file (each watches the file as well).
 * A worker that dies once all are serving is started again (at most once a second; it starts its
 * upstreams before it listens, as its siblings serve meanwhile); one that fails during start-up
 * fails the whole start: the primary stops the others and exits with its code.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from './observability/logger.js';

/** What the primary and a worker say to each other over IPC. */
export type WorkerMessage =
  { mcpgw: 'stop'; signal: string } | { mcpgw: 'reload' } | { mcpgw: 'listening'; url: string };

export function isWorkerMessage(m: unknown): m is WorkerMessage {
  return typeof m === 'object' && m !== null && typeof (m as { mcpgw?: unknown }).mcpgw === 'string';
}

const RESTART_INTERVAL_MS = 1000;

/** Set in the environment of a worker started in place of one that died. */
const REPLACEMENT_ENV = 'MCPGW_CLUSTER_REPLACEMENT';

/** In a worker: whether it replaces one that died (its siblings serve while it starts). */
export function isReplacementWorker(): boolean {
  return cluster.isWorker && process.env[REPLACEMENT_ENV] === '1';
}

/** Runs the primary until every worker is gone; resolves with the process's exit code. */
export function runPrimary(count: number, log: Logger, version: string): Promise<number> {
  return new Promise((resolve) => {
    const listening = new Set<number>();
    let serving = false;
    let stopping: string | undefined;
    let exitCode = 0;
    let lastRestart = 0;

    const fork = (replacement: boolean): Worker => {
      const w = cluster.fork(replacement ? { [REPLACEMENT_ENV]: '1' } : {});
      w.on('message', (m: unknown) => {
        if (!isWorkerMessage(m) || m.mcpgw !== 'listening') return;
        listening.add(w.id);
        if (!serving && listening.size >= count) {
          serving = true;
          process.stdout.write(`mcp-gateway ${version} listening: MCP endpoint ${m.url} (${count} workers)\n`);
        }
      });
      return w;
    };
    const workers = (): Worker[] => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const tell = (m: WorkerMessage): void => {
      for (const w of workers()) if (w.isConnected()) w.send(m);
    };

    cluster.on('exit', (w, code, signal) => {
      listening.delete(w.id);
      const clean = code === 0 && signal === null;
      if (stopping === undefined && !serving) {
        // A worker that cannot start (config, port, Redis): the others would not either.
        log.fatal({ worker: w.process.pid, code, signal }, 'a worker failed to start; stopping the others');
        exitCode = code || 1;
        stop('start-up failure');
      } else if (stopping === undefined) {
        log.error({ worker: w.process.pid, code, signal }, 'worker exited; starting another');
        const wait = Math.max(0, lastRestart + RESTART_INTERVAL_MS - Date.now());
        lastRestart = Date.now() + wait;
        setTimeout(() => stopping === undefined && fork(true), wait);
      } else if (!clean) {
        exitCode = exitCode || code || 1;
      }
      if (stopping !== undefined && workers().length === 0) resolve(exitCode);
    });

    const stop = (signal: string): void => {
      if (stopping !== undefined) {
        if (signal === 'start-up failure') return;
        log.warn({ signal }, 'second signal: killing the workers');
        for (const w of workers()) w.process.kill('SIGKILL');
        exitCode = 1;
        return;
      }
      stopping = signal;
      log.info({ signal, workers: workers().length }, 'shutting down the workers');
      tell({ mcpgw: 'stop', signal });
      if (workers().length === 0) resolve(exitCode);
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGHUP', () => tell({ mcpgw: 'reload' }));

    log.info({ workers: count }, 'starting workers');
    for (let i = 0; i < count; i++) fork(false);
  });
}

/**
 * In a worker: the primary's stop and reload messages, and its going away (the IPC channel
 * closes) as a stop. The worker's own SIGINT is ignored: the primary passes it on (a terminal's
 * Ctrl-C reaches the whole process group), and two would mean "exit now".
 */
export function followPrimary(stop: (signal: string) => void, reload: () => void): void {
  process.on('message', (m: unknown) => {
    if (!isWorkerMessage(m)) return;
    if (m.mcpgw === 'stop') stop(m.signal);
    else if (m.mcpgw === 'reload') reload();
  });
  process.on('disconnect', () => stop('primary gone'));
}

/** In a worker: tell the primary this worker serves (it says "listening" once all do). */
export function reportListening(url: string): void {
  const m: WorkerMessage = { mcpgw: 'listening', url };
  process.send?.(m);
}
