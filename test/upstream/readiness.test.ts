/**
 * /readyz: a replica stays in rotation while an optional upstream is down (the rest of the
 * catalog still works), and leaves it while a `required: true` upstream is down.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, exampleConfig, startGateway, stdioUpstream, type RunningGateway } from '../support/gateway.js';

const started: RunningGateway[] = [];
afterAll(async () => {
  await Promise.all(started.map((g) => g.stop()));
});

// A command that exits at once: this upstream never comes up.
const broken = (extra: Record<string, unknown>) =>
  stdioUpstream('broken', ECHO_SERVER, { command: process.execPath, args: ['-e', 'process.exit(3)'], ...extra });

async function readyz(
  gw: RunningGateway,
): Promise<{ status: number; body: { upstreams: Record<string, { state: string }> } }> {
  const res = await fetch(new URL('/readyz', gw.base));
  return { status: res.status, body: (await res.json()) as { upstreams: Record<string, { state: string }> } };
}

describe('/readyz', () => {
  it('is 200 with an optional upstream down, and reports it down', async () => {
    const gw = await startGateway(exampleConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER), broken({})] }));
    started.push(gw);
    const r = await readyz(gw);
    expect(r.body.upstreams.broken!.state).toBe('down');
    expect(r.body.upstreams.echo!.state).toBe('ready');
    expect(r.status).toBe(200);
  });

  it('is 503 while a required upstream is down', async () => {
    const gw = await startGateway(
      exampleConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER), broken({ required: true })] }),
    );
    started.push(gw);
    const r = await readyz(gw);
    expect(r.body.upstreams.broken!.state).toBe('down');
    expect(r.status).toBe(503);
  });
});
