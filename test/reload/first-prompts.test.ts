/**
 * A reload that adds the first upstream with prompts (or resources): the gateway cannot add a
 * capability to a session after initialize, so it offers tools, prompts and resources (with
 * listChanged) from the start, lists empty ones while no upstream has any, and the list_changed
 * of a reload means something to every session opened before it: a 2025 session (the SDK client,
 * its GET stream) and a 2026-07-28 listen stream hear it and find the new prompts and resources.
 * A real gateway from a config file rewritten in place, stdio upstreams, loopback HTTP.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, SLOW_SERVER, openSession, post } from '../support/gateway.js';
import { startFromFile } from '../support/reload.js';
import { listenStream, watchingClient } from '../support/reload-clients.js';
import { until } from '../support/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const upstream = (name: string, script: string) => ({
  name,
  transport: 'stdio',
  command: process.execPath,
  args: [script],
});

describe('a reload that adds the first prompts and resources', () => {
  it('sessions opened before were offered both lists, hear list_changed, and list what came', async () => {
    const gw = await startFromFile({ upstreams: [upstream('slow', SLOW_SERVER)] }, cleanups);
    const watcher = await watchingClient(gw.url);
    cleanups.push(() => watcher.client.close());
    expect(watcher.client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true },
    });
    expect((await watcher.client.listPrompts()).prompts).toEqual([]);
    expect((await watcher.client.listResources()).resources).toEqual([]);
    const listen = await listenStream(gw.url, { promptsListChanged: true, resourcesListChanged: true });
    cleanups.push(() => listen.close());
    expect(listen.acknowledged).toEqual({ promptsListChanged: true, resourcesListChanged: true });

    gw.file.write({ logLevel: 'silent', upstreams: [upstream('slow', SLOW_SERVER), upstream('echo', ECHO_SERVER)] });
    expect((await gw.gateway.reload()).outcome).toBe('ok');

    const both = ['notifications/prompts/list_changed', 'notifications/resources/list_changed'];
    await until(
      'the 2025 session to hear both list changes',
      () => both.every((m) => watcher.changes.includes(m)),
      10_000,
    );
    await until('the listen stream to hear both', () => both.every((m) => listen.changes.includes(m)), 10_000);
    expect((await watcher.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['echo__greeting']);
    expect((await watcher.client.listResources()).resources).toHaveLength(1);
    // Another client, opened after, is served by the new upstream.
    const sid = await openSession(gw.url);
    const r = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'echo__greeting', arguments: { name: 'Ada' } } },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(r.json.result.messages).toHaveLength(1);
  }, 60_000);
});
