/**
 * Three gateway replicas sharing one Redis, no affinity: a client whose every HTTP request goes
 * to the next replica in turn completes the whole SDK flow, including a sampling round-trip
 * through a per-session upstream whose worker lives on one replica only. One suite, run against
 * each Redis topology by its own test file (round-robin.test.ts, round-robin-cluster.test.ts).
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, SLOW_SERVER, stdioUpstream, toolText, type RunningGateway } from '../support/gateway.js';
import { roundRobinFetch, startReplicas } from '../support/replicas.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** A Redis the test started, and the `sessions` keys that point the gateway at it. */
export interface SharedRedis {
  /** e.g. { redisUrl } or { redis: { cluster: [...] } } */
  sessions: Record<string, unknown>;
  stop(): Promise<void>;
}

export function roundRobinFlow(title: string, startShared: () => Promise<SharedRedis>): void {
  let shared: SharedRedis | undefined;
  const replicas: RunningGateway[] = [];
  const hits: number[] = [0, 0, 0];

  beforeAll(async () => {
    shared = await startShared();
    replicas.push(
      ...(await startReplicas(3, {
        sessions: { ttlSeconds: 600, ...shared.sessions },
        upstreams: [
          stdioUpstream('echo', ECHO_SERVER),
          stdioUpstream('slow', SLOW_SERVER),
          stdioUpstream('everything', EVERYTHING, {
            args: [EVERYTHING, 'stdio'],
            mode: 'per-session',
            pool: { max: 8 },
          }),
        ],
      })),
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await shared?.stop();
  });

  describe(`three replicas, round-robin, no affinity: ${title}`, () => {
    it('completes list, call with progress, sampling via a per-session upstream, and DELETE', async () => {
      const client = new Client({ name: 'rr', version: '1.0.0' }, { capabilities: { sampling: {} } });
      let sampled = 0;
      client.setRequestHandler(CreateMessageRequestSchema, async () => {
        sampled++;
        return { role: 'assistant', content: { type: 'text', text: 'sampled across replicas' }, model: 'rr-model' };
      });
      const transport = new StreamableHTTPClientTransport(replicas[0]!.url, { fetch: roundRobinFetch(replicas, hits) });
      await client.connect(transport);

      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('everything__trigger-sampling-request');
      expect(names).toContain('slow__sleep');

      for (let i = 0; i < 3; i++) {
        const progress: number[] = [];
        const slept = await client.callTool({ name: 'slow__sleep', arguments: { ms: 90, steps: 3 } }, undefined, {
          onprogress: (p) => progress.push(p.progress),
        });
        expect(toolText(slept)).toBe('slept 90ms');
        expect(progress).toEqual([1, 2, 3]);
      }

      // Several calls, so they land on different replicas than the one owning the worker.
      for (let i = 0; i < 4; i++) {
        const result = await client.callTool({
          name: 'everything__trigger-sampling-request',
          arguments: { prompt: `q${i}`, maxTokens: 5 },
        });
        expect(toolText(result)).toContain('sampled across replicas');
      }
      expect(sampled).toBe(4);
      // Exactly one replica runs this session's worker.
      const owners = replicas.filter((r) => internals(r.gateway.server).perSessionWorkers('everything') > 0);
      expect(owners).toHaveLength(1);

      const sid = transport.sessionId!;
      await transport.terminateSession();
      // The other replicas drop their cached copy when the DELETE's announcement reaches them over
      // the bus (a Cluster relays it between nodes first): within cacheMs (250 ms) at worst.
      for (const r of replicas) {
        await until(
          'every replica to answer 404 for the deleted session',
          async () => {
            const res = await fetch(r.url, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                'mcp-session-id': sid,
              },
              body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
            });
            return res.status === 404;
          },
          2000,
        );
      }
      // The owner's worker stopped with the session, though DELETE may have reached another replica.
      for (
        let i = 0;
        i < 100 && replicas.some((r) => internals(r.gateway.server).perSessionWorkers('everything') > 0);
        i++
      )
        await new Promise((r) => setTimeout(r, 50));
      expect(replicas.map((r) => internals(r.gateway.server).perSessionWorkers('everything'))).toEqual([0, 0, 0]);
      expect(hits.every((h) => h > 3)).toBe(true);
      await client.close();
    });
  });
}
