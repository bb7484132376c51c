/**
 * MCP over WebSocket: the SDK v1 WebSocketClientTransport through the whole flow, and the bad
 * inputs of the socket.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';
import { connectClient, everythingConfig, sdkFlow } from './connection-flow.js';

let gw: RunningGateway;
let client: Client;

function wsUrl(path = '/ws'): URL {
  const url = new URL(path, gw.base);
  url.protocol = 'ws:';
  return url;
}

beforeAll(async () => {
  gw = await startGateway(everythingConfig());
  client = await connectClient('ws-client', new WebSocketClientTransport(wsUrl()));
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.stop();
});

describe('WebSocket with the SDK v1 client', () => {
  it('negotiates with the gateway', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'mcp-gateway' });
  });
  sdkFlow(
    () => gw,
    () => client,
    'ws-client',
  );

  it('ends the session, and its per-session worker, when the socket closes', async () => {
    const sessions = await gw.gateway.store.size();
    const workers = internals(gw.gateway.server).perSessionWorkers('everything');
    const other = await connectClient('short-lived', new WebSocketClientTransport(wsUrl()));
    expect(await gw.gateway.store.size()).toBe(sessions + 1);
    await other.callTool({ name: 'everything__echo', arguments: { message: 'hi' } }); // starts its worker
    expect(internals(gw.gateway.server).perSessionWorkers('everything')).toBe(workers + 1);
    await other.close();
    await until('session ended', async () => (await gw.gateway.store.size()) === sessions, 5000);
    await until(
      'its worker stopped',
      () => internals(gw.gateway.server).perSessionWorkers('everything') === workers,
      5000,
    );
  });
});
