/**
 * /status.json and /status break the catalog down per virtual server (servers[]), as each
 * server's clients see it: its selection only, under the names its overrides give tools.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  SLOW_SERVER,
  exampleConfig,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('slow', SLOW_SERVER)],
      servers: [
        {
          path: '/mcp/team',
          tools: ['echo__add', 'echo__echo'],
          prompts: [],
          resources: [],
          overrides: { echo__add: { name: 'plus' } },
        },
      ],
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
});

type ServerRow = {
  name: string;
  path: string;
  totals: { tools: number; prompts: number };
  byUpstream: Record<string, { tools: { count: number; names: string[] } }>;
};

describe('/status per virtual server', () => {
  it('lists the main endpoint with the whole catalog and the team server with its selection under its names', async () => {
    const report = (await (await fetch(`${gw.base}/status.json`)).json()) as { servers: ServerRow[] };
    const [main, team] = report.servers;
    expect(main).toMatchObject({ name: 'main', path: '/mcp' });
    expect(main!.byUpstream.slow!.tools.count).toBeGreaterThan(0);
    expect(team).toMatchObject({ name: '/mcp/team', path: '/mcp/team', totals: { tools: 2, prompts: 0 } });
    expect(team!.byUpstream.echo!.tools.names.sort()).toEqual(['echo__echo', 'plus']);
    expect(team!.byUpstream.slow?.tools.count ?? 0).toBe(0);
  });

  it('names the team server on the HTML page', async () => {
    const html = await (await fetch(`${gw.base}/status`)).text();
    expect(html).toContain('/mcp/team');
    expect(html).toContain('plus');
  });
});
