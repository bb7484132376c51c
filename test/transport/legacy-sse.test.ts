/**
 * The 2024-11-05 HTTP+SSE transport: the SDK v1 SSEClientTransport through the whole flow, and
 * the bad inputs of its POST endpoint.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { connectClient, everythingConfig, sdkFlow } from './connection-flow.js';

let gw: RunningGateway;
let client: Client;

beforeAll(async () => {
  gw = await startGateway(everythingConfig());
  client = await connectClient('sse-client', new SSEClientTransport(new URL('/sse', gw.base)));
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.stop();
});

describe('legacy HTTP+SSE with the SDK v1 client', () => {
  it('negotiates with the gateway', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'mcp-gateway' });
  });
  sdkFlow(
    () => gw,
    () => client,
    'sse-client',
  );
});
