/**
 * MCP over WebSocket: the SDK v1 WebSocketClientTransport through the whole flow, and the bad
 * inputs of the socket.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.js';
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
  sdkFlow(() => gw, () => client, 'ws-client');
});
