/**
 * A gateway where no upstream has `tasks:`: no tasks capability in either era, a task hint on
 * tools/call is ignored (the spec: a receiver that does not declare tasks processes the request
 * normally), and the tasks methods do not exist (2026-07-28: 404 -32601, as any method that
 * revision lacks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { modern } from '../support/tasks.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(exampleConfig());
}, 30_000);

afterAll(async () => {
  await gw?.stop();
});

describe('without tasks', () => {
  it('declares none and runs a task-hinted call as an ordinary one', async () => {
    const init = await post(gw.url, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'n', version: '1' } },
    });
    expect(init.json.result.capabilities.tasks).toBeUndefined();
    const headers = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
    await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    const call = await post(
      gw.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo__echo', arguments: { text: 'plain' }, task: { ttl: 1000 } },
      },
      headers,
    );
    expect(toolText(call.json.result)).toContain('plain');
    expect(
      (await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId: 'x' } }, headers)).json.error
        .code,
    ).toBe(-32601);
    expect((await modern(gw, 'server/discover')).result.capabilities.extensions).toBeUndefined();
    const res = await modern(gw, 'tasks/get', { taskId: 'x' });
    expect(res.error.code).toBe(-32601);
  });
});
