import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import type { StdioUpstreamConfig } from '../../config/schema.js';
import { GatewayError } from '../../jsonrpc/errors.js';
import type { JsonRpcMessage } from '../../jsonrpc/messages.js';
import { suppressedField, type LogThrottle } from '../../observability/log-throttle.js';
import type { DataPathEvents } from '../../observability/events.js';
import { BaseUpstream } from '../connection/base-upstream.js';
import { launchOf } from './stdio-launch.js';
import { LARGE_TEXT_CHARS, nextTurn, writeAcrossTurns } from '../../timing/loop-turns.js';
import type {
  CallOptions,
  ClientIdentity,
  UpstreamCall,
  UpstreamPeer,
  UpstreamServerInfo,
} from '../../contracts/upstream.js';

/** A line longer than this is a broken upstream, not a message to buffer forever. */
const MAX_LINE_CHARS = 64 * 1024 * 1024;
const STOP_GRACE_MS = 2000;

/** What every worker of one upstream shares: its counters, and the throttle of its repeated log lines. */
export interface WorkerDiagnostics {
  diagnostics: DataPathEvents;
  throttle: LogThrottle;
}

/** An MCP server as a child process speaking newline-delimited JSON-RPC on stdin/stdout. */
export class StdioUpstream extends BaseUpstream {
  #child: ChildProcess | undefined;
  #outbox: string[] = [];
  #flushScheduled = false;
  /** A large line is being written a slice per turn: what is sent meanwhile waits in the outbox, in order. */
  #writing = false;
  /** Messages read after a large one, delivered in order in the turn after its parse. */
  #deferred: unknown[] | undefined;
  #buffer = '';
  #closing = false;
  #exited = false;
  #exitWaiters: Array<() => void> = [];

  constructor(
    private readonly config: StdioUpstreamConfig,
    private readonly identity: ClientIdentity,
    private readonly log: Logger,
    index: number,
    peer: UpstreamPeer,
    private readonly reporting: WorkerDiagnostics,
  ) {
    super(`${config.name}#${index}`, peer, log);
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  prewarm(): void {
    if (!this.#child) this.#spawn();
  }

  async start(): Promise<UpstreamServerInfo> {
    const child = this.#child ?? this.#spawn();
    if (this.#exited) throw new GatewayError('UPSTREAM_UNAVAILABLE', `${this.label} exited before it was initialized`);
    try {
      this.serverInfo = await this.handshake(this.identity, this.config.timeoutMs);
    } catch (err) {
      await this.close();
      throw err;
    }
    this.log.info(
      {
        upstream: this.label,
        pid: child.pid,
        server: this.serverInfo.serverInfo,
        version: this.serverInfo.protocolVersion,
      },
      'upstream ready',
    );
    return this.serverInfo;
  }

  #spawn(): ChildProcess {
    const launch = launchOf(this.config);
    const child = spawn(launch.command, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so stopping it also stops whatever it spawned.
      detached: true,
    });
    this.#child = child;
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.#onData(chunk));
    child.stderr!.setEncoding('utf8');
    let stderrTail = '';
    child.stderr!.on('data', (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-2000);
      for (const line of chunk.split('\n')) {
        if (line.trim()) this.log.info({ upstream: this.label, pid: child.pid, stderr: line }, 'upstream stderr');
      }
    });
    child.stdin!.on('error', (err) => this.log.debug({ upstream: this.label, err }, 'upstream stdin error'));
    child.on('error', (err) => this.#onExit(`failed to start: ${err.message}`));
    child.on('exit', (code, signal) =>
      this.#onExit(signal ? `exited on ${signal}` : `exited with code ${code}`, stderrTail),
    );
    return child;
  }

  call(method: string, params: Record<string, unknown> | undefined, options?: CallOptions): UpstreamCall {
    return this.connection.call(method, params, options);
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.connection.close(new GatewayError('UPSTREAM_UNAVAILABLE', `${this.label} is shutting down`));
    const child = this.#child;
    if (!child || this.#exited) return;
    this.#flush();
    child.stdin?.end();
    if (await this.#waitExit(STOP_GRACE_MS)) return;
    this.#signalGroup('SIGTERM');
    if (await this.#waitExit(STOP_GRACE_MS)) return;
    this.#signalGroup('SIGKILL');
    await this.#waitExit(STOP_GRACE_MS);
  }

  #signalGroup(signal: NodeJS.Signals): void {
    const pid = this.#child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        this.#child?.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }

  #waitExit(ms: number): Promise<boolean> {
    if (this.#exited) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.#exitWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  #onExit(reason: string, stderrTail = ''): void {
    if (this.#exited) return;
    this.#exited = true;
    // What the process answered before it went is delivered before its calls are failed.
    this.#deliverDeferred();
    // A call in flight on a dead process gets its error now, never a hang.
    this.connection.close(new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${this.label} ${reason}`));
    // Whatever the process left behind in its group goes with it.
    if (!this.#closing) this.#signalGroup('SIGKILL');
    for (const w of this.#exitWaiters.splice(0)) w();
    if (!this.#closing) {
      this.#logExit(reason, stderrTail);
      this.emitExit(reason);
    }
  }

  /**
   * A worker that never answered initialize failed to start: whoever started it logs that (its
   * stderr lines are logged as they come). One that ran and died is news, but a server that
   * dies again after every restart is one line per logRepeatMs, not one per death.
   */
  #logExit(reason: string, stderrTail: string): void {
    if (this.serverInfo === undefined) {
      this.log.debug({ upstream: this.label, reason }, 'upstream exited before it was initialized');
      return;
    }
    const suppressed = this.reporting.throttle.take('exit');
    if (suppressed === undefined) return;
    this.log.warn(
      { upstream: this.label, reason, stderr: stderrTail.slice(-500) || undefined, ...suppressedField(suppressed) },
      'upstream exited',
    );
  }

  #onData(chunk: string): void {
    let start = 0;
    let nl = chunk.indexOf('\n');
    if (nl === -1) {
      this.#buffer += chunk;
      if (this.#buffer.length > MAX_LINE_CHARS) this.#protocolFailure('message larger than the line limit');
      return;
    }
    let line = this.#buffer + chunk.slice(0, nl);
    this.#buffer = '';
    for (;;) {
      this.#onLine(line);
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
      if (nl === -1) break;
      line = chunk.slice(start, nl);
    }
    if (start < chunk.length) this.#buffer = chunk.slice(start);
  }

  #onLine(line: string): void {
    if (line.length === 0 || line === '\r') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // A server that logs to stdout would otherwise put every one of its lines in ours.
      this.reporting.diagnostics.emit('upstream:stdout-garbage', { upstream: this.config.name });
      const suppressed = this.reporting.throttle.take('stdout');
      if (suppressed !== undefined)
        this.log.warn(
          { upstream: this.label, line: line.slice(0, 200), ...suppressedField(suppressed) },
          'upstream wrote a line that is not JSON',
        );
      return;
    }
    this.#deliver(value, line.length > LARGE_TEXT_CHARS);
  }

  /**
   * A large message is handed on in the turn after its parse, so parsing it and writing whatever
   * it answers are two holds of the event loop, not one; the messages after it wait for it.
   */
  #deliver(value: unknown, large: boolean): void {
    if (this.#deferred) {
      this.#deferred.push(value);
      return;
    }
    if (!large) {
      this.connection.receive(value);
      return;
    }
    this.#deferred = [value];
    nextTurn(() => this.#deliverDeferred());
  }

  #deliverDeferred(): void {
    const values = this.#deferred;
    this.#deferred = undefined;
    for (const v of values ?? []) this.connection.receive(v);
  }

  #protocolFailure(reason: string): void {
    this.log.error({ upstream: this.label, reason }, 'upstream protocol failure; stopping it');
    this.#buffer = '';
    this.#signalGroup('SIGKILL');
  }

  protected send(message: JsonRpcMessage): number {
    const line = JSON.stringify(message) + '\n';
    this.#outbox.push(line);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      // One write per event-loop turn: calls from many HTTP requests share a syscall.
      setImmediate(() => this.#flush());
    }
    // In characters, not bytes: a weight for the pool, not worth a second pass over the line.
    return line.length;
  }

  #flush(): void {
    this.#flushScheduled = false;
    if (this.#outbox.length === 0 || this.#writing) return;
    const data = this.#outbox.length === 1 ? this.#outbox[0]! : this.#outbox.join('');
    this.#outbox = [];
    const stdin = this.#child?.stdin;
    if (!stdin || stdin.destroyed || this.#exited) return;
    if (data.length <= LARGE_TEXT_CHARS) {
      // Nearly every flush: one write, without the slicing's closures.
      stdin.write(data);
      return;
    }
    this.#writing = true;
    const stopped = () => stdin.destroyed || this.#exited;
    writeAcrossTurns(data, { write: (s) => stdin.write(s), last: (s) => stdin.write(s), stopped }, () => {
      this.#writing = false;
      this.#flush();
    });
  }
}
