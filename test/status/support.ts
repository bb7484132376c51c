/** What the status tests share: a closed loopback port and a report poller. */
import { createServer, type AddressInfo } from 'node:net';
import { until } from '../support/wait.js';

/** A port nothing listens on (bound, read, released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export interface UpstreamRow {
  name: string;
  state: string;
  lastFailure?: string;
  circuit?: string;
}

/** GET /status.json until `ok` holds for its upstreams; returns the last report. */
export async function statusWhen(
  base: string,
  ok: (upstreams: UpstreamRow[]) => boolean,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  let report: Record<string, unknown> = {};
  await until(
    'the upstreams in /status.json',
    async () => {
      const res = await fetch(`${base}/status.json`, { headers });
      report = (await res.json()) as Record<string, unknown>;
      return ok(report.upstreams as UpstreamRow[]);
    },
    15_000,
    100,
  );
  return report;
}
