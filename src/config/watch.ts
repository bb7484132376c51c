/**
 * Watches a config file for changes that should reload it. The directory is watched, not the
 * file: an editor or `kubectl` replaces files by rename, and a Kubernetes ConfigMap volume is a
 * symlink (`gateway.yaml -> ..data/gateway.yaml`) whose `..data` link is swapped atomically to a
 * new timestamped directory, which a watch on the file itself never sees. Events come in bursts
 * (a write is truncate + write, a swap is several renames), so they are debounced, and only a
 * change of the content (its SHA-256) counts: touching the file or a sibling reloads nothing. A
 * slow poll of the same hash catches what a watch can miss (network file systems).
 */
import { createHash } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';

export interface ConfigWatchOptions {
  /** Quiet time after the last event before the file is read. */
  debounceMs?: number;
  /** How often the content is compared without an event (0: never). */
  pollMs?: number;
  /** A watch that failed (the directory went away); the poll goes on. */
  onError?: (err: Error) => void;
}

export interface ConfigWatch {
  close(): void;
}

/** The file's content hash, or what made it unreadable (a change too: the reload names it). */
export function contentHash(file: string): string {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch (err) {
    return `unreadable:${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
}

/** Calls `onChange` once per settled change of `file`'s content (through symlinks). */
export function watchConfigFile(file: string, onChange: () => void, options: ConfigWatchOptions = {}): ConfigWatch {
  const path = resolve(file);
  const debounceMs = options.debounceMs ?? 300;
  let last = contentHash(path);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const check = () => {
    timer = undefined;
    if (closed) return;
    const now = contentHash(path);
    if (now === last) return;
    last = now;
    onChange();
  };
  const settle = () => {
    clearTimeout(timer);
    timer = setTimeout(check, debounceMs);
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, settle);
    watcher.on('error', (err) => options.onError?.(err));
  } catch (err) {
    options.onError?.(err as Error);
  }
  const pollMs = options.pollMs ?? 10_000;
  const poll = pollMs > 0 ? setInterval(settle, pollMs) : undefined;
  poll?.unref();
  return {
    close: () => {
      closed = true;
      clearTimeout(timer);
      clearInterval(poll);
      watcher?.close();
    },
  };
}
