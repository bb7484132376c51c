/**
 * The config part of /status: the file the CLI loaded, and reload state as whatever wires reload
 * in reports it (ConfigStatus, or a reload feature's own status through snapshotOfReload).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { ConfigStatus, snapshotOfReload } from '../../src/config/reload-state.js';
import { ECHO_SERVER, stdioUpstream } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';

describe('ConfigStatus', () => {
  it('says reload is not enabled until something reports a reload', () => {
    const s = new ConfigStatus('/etc/gw.yaml', new Date('2026-01-01T00:00:00Z'));
    expect(s.snapshot()).toEqual({
      loadedAt: '2026-01-01T00:00:00.000Z',
      file: '/etc/gw.yaml',
      reload: { enabled: false },
    });
    s.enableReload();
    expect(s.snapshot().reload).toEqual({ enabled: true, count: 0 });
  });

  it('counts reloads; an applied one moves loadedAt, a rejected one keeps its (bounded) reason', () => {
    const s = new ConfigStatus();
    s.recordReload('rejected', 'x'.repeat(2000), new Date('2026-01-01T00:01:00Z'));
    expect(s.snapshot()).toMatchObject({
      file: null,
      reload: { enabled: true, count: 1, lastOutcome: 'rejected', lastAt: '2026-01-01T00:01:00.000Z' },
    });
    const rejected = s.snapshot().reload;
    expect(rejected.enabled && rejected.lastError?.length).toBe(500);
    s.recordReload('ok', undefined, new Date('2026-01-01T00:02:00Z'));
    expect(s.snapshot()).toEqual({
      loadedAt: '2026-01-01T00:02:00.000Z',
      file: null,
      reload: { enabled: true, count: 2, lastOutcome: 'ok', lastAt: '2026-01-01T00:02:00.000Z' },
    });
  });

  it("takes a reload feature's own status as it is", () => {
    expect(
      snapshotOfReload({
        loadedAt: '2026-01-01T00:00:00.000Z',
        file: undefined,
        count: 3,
        lastOutcome: 'rejected',
        lastError: 'bad',
      }),
    ).toEqual({
      loadedAt: '2026-01-01T00:00:00.000Z',
      file: null,
      reload: { enabled: true, count: 3, lastOutcome: 'rejected', lastError: 'bad' },
    });
  });
});

describe('the CLI', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await spawnGateway({ upstreams: [stdioUpstream('echo', ECHO_SERVER)] });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('names the config file it loaded on /status.json, and counts a reload by SIGHUP', async () => {
    type Report = {
      config: { file: string; reload: { enabled: boolean; count?: number; lastOutcome?: string } };
      gateway: { state: string };
    };
    const read = async () => (await (await fetch(new URL('/status.json', gw.url))).json()) as Report;
    const report = await read();
    expect(report.config.file).toMatch(/gateway\.json$/);
    expect(report.config.reload).toEqual({ enabled: true, count: 0 });
    expect(report.gateway.state).toBe('ready');
    gw.child.kill('SIGHUP');
    await until('the reload on /status.json', async () => (await read()).config.reload.count === 1);
    expect((await read()).config.reload).toMatchObject({ enabled: true, count: 1, lastOutcome: 'ok' });
  });
});
