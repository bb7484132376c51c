import type { Cluster } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/** What the gateway can tell of a Redis Cluster beyond "the client is connected". */
export interface ClusterHealthStatus {
  /**
   * The cluster's own verdict (CLUSTER INFO cluster_state): ok when any master that answered says so, fail when all say
   * fail.
   */
  clusterState: 'ok' | 'fail' | 'unknown';
  /**
   * Masters flagged failing by the cluster, not answering this replica, or not yet seeing the cluster ok: their slots'
   * commands fail.
   */
  failingMasters: string[];
}

export interface ClusterHealthOptions {
  intervalMs?: number;
  /** A master that does not answer within this long counts as failing. */
  probeTimeoutMs?: number;
  log?: Logger;
}

/**
 * Asks the cluster how it is, every few seconds. A Cluster client stays 'ready' while one master
 * is dead and, once the cluster declares itself down (CLUSTERDOWN), while every command fails:
 * its status alone cannot feed /readyz.
 *
 * Failing masters do not make the replica unready: every replica shares the cluster, so taking
 * them all out of rotation would turn the loss of some slots into the loss of all. Only the
 * cluster's own 'fail' does, since then it refuses every command.
 */
export class ClusterHealth {
  #status: ClusterHealthStatus = { clusterState: 'unknown', failingMasters: [] };
  readonly #timer: NodeJS.Timeout;
  readonly #timeoutMs: number;
  #probing = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: ClusterHealthOptions = {},
  ) {
    this.#timeoutMs = options.probeTimeoutMs ?? 1000;
    this.#timer = setInterval(() => void this.probe(), options.intervalMs ?? 2000);
    this.#timer.unref();
    void this.probe();
  }

  get status(): ClusterHealthStatus {
    return this.#status;
  }

  /** One round of questions to every master the client knows; the result becomes `status`. */
  async probe(): Promise<ClusterHealthStatus> {
    if (this.#probing) return this.#status;
    this.#probing = true;
    try {
      const next = await this.#ask();
      this.#report(next);
      this.#status = next;
    } finally {
      this.#probing = false;
    }
    return this.#status;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  async #ask(): Promise<ClusterHealthStatus> {
    if (this.cluster.status !== 'ready') return { clusterState: 'unknown', failingMasters: [] };
    const masters = this.cluster.nodes('master');
    const answers = await Promise.all(
      masters.map(async (node) => {
        const address = `${node.options.host}:${node.options.port}`;
        try {
          const [info, nodes] = await this.#withTimeout(Promise.all([node.cluster('INFO'), node.cluster('NODES')]));
          return { address, info: String(info), nodes: String(nodes) };
        } catch {
          return { address, info: undefined, nodes: undefined };
        }
      }),
    );
    const failing = new Set(answers.filter((a) => a.info === undefined).map((a) => a.address));
    const answered = answers.filter((a) => a.info !== undefined);
    // A dead master may already be gone from the client's node list: the cluster still names it.
    for (const a of answered) for (const address of failingInNodes(a.nodes!)) failing.add(address);
    let clusterState: ClusterHealthStatus['clusterState'] = 'unknown';
    const notOk: string[] = [];
    for (const a of answered) {
      const state = /cluster_state:(\w+)/.exec(a.info!)?.[1];
      if (state === 'ok') clusterState = 'ok';
      else {
        if (state === 'fail' && clusterState === 'unknown') clusterState = 'fail';
        notOk.push(a.address);
      }
    }
    // While the others say ok, a master that does not (one that rejoined and has not caught up)
    // refuses its slots' commands (CLUSTERDOWN). When all say fail, the culprits are the flagged ones.
    if (clusterState === 'ok') for (const address of notOk) failing.add(address);
    return { clusterState, failingMasters: [...failing].sort() };
  }

  #withTimeout<T>(p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('cluster probe timed out')), this.#timeoutMs);
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }

  #report(next: ClusterHealthStatus): void {
    const log = this.options.log;
    if (!log) return;
    const before = this.#status;
    if (next.clusterState !== before.clusterState && before.clusterState !== 'unknown') {
      (next.clusterState === 'ok' ? log.info.bind(log) : log.warn.bind(log))(
        { clusterState: next.clusterState },
        'Redis Cluster state changed',
      );
    }
    if (next.failingMasters.join() !== before.failingMasters.join()) {
      if (next.failingMasters.length > 0)
        log.warn(
          { failingMasters: next.failingMasters },
          'Redis Cluster masters failing: their sessions cannot be served',
        );
      else log.info('Redis Cluster masters all answering again');
    }
  }
}

/**
 * Masters flagged fail or pfail that still hold slots, from CLUSTER NODES output, as "host:port".
 * A master whose slots a replica took over is flagged fail too, but serves nothing any more.
 */
function failingInNodes(nodes: string): string[] {
  const out: string[] = [];
  for (const line of nodes.split('\n')) {
    const fields = line.split(' ');
    const flags = fields[2]?.split(',') ?? [];
    if (!flags.includes('master') || !(flags.includes('fail') || flags.includes('fail?'))) continue;
    if (fields.length <= 8) continue; // fields 9.. are its slot ranges
    // "ip:port@cport[,hostname]"
    const address = fields[1]?.split('@')[0];
    if (address) out.push(address);
  }
  return out;
}
