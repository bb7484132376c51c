/**
 * Large messages through a real gateway and real stdio servers, now that they cross event-loop
 * turns (src/timing/loop-turns.ts): the request body is parsed in a turn of its own, the line to
 * the server and the JSON reply are written a slice per turn, and a large line from the server is
 * handed on in the turn after its parse. What must hold: every byte arrives (multi-byte characters
 * and surrogate pairs on any slice boundary), the order of a server's messages is kept (large
 * progress notifications stay ahead of the answer), other clients are answered meanwhile, and
 * nothing is left held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LARGE_TEXT_CHARS } from '../../src/timing/loop-turns.js';
import { untilNothingHeld } from '../support/health.js';
import { exampleConfig, openSession, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { stdioLoop } from '../support/raw-stdio-server.js';
import { messagesOf, parseSse } from '../support/sse.js';

/**
 * A server that answers `burst` with one write of three lines: a large progress notification, a
 * small one, then the answer. The gateway reads them in one chunk, so the two small lines reach it
 * while the large one waits for its turn: they must wait behind it. `last-words` writes a large
 * answer and exits at once.
 */
const BURST = stdioLoop(`
  const out = (ms) => process.stdout.write(ms.map((x) => JSON.stringify(x) + '\\n').join(''));
  if (m.method === 'initialize')
    out([{ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
      serverInfo: { name: 'burst', version: '1' } } }]);
  else if (m.method === 'tools/list')
    out([{ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'burst', inputSchema: { type: 'object' } },
      { name: 'last-words', inputSchema: { type: 'object' } }] } }]);
  else if (m.method === 'tools/call' && m.params.name === 'last-words')
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text',
      text: 'z'.repeat(400000) }] } }) + '\\n', () => process.exit(0));
  else if (m.method === 'tools/call') {
    const progressToken = m.params._meta.progressToken;
    const note = (progress, message) =>
      ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress, message } });
    out([note(1, 'y'.repeat(400000)), note(2, 'small'), { jsonrpc: '2.0', id: m.id, result: { content: [] } }]);
  } else if (m.id !== undefined) out([{ jsonrpc: '2.0', id: m.id, result: {} }]);
`);

let gw: RunningGateway;
let sid: string;

beforeAll(async () => {
  const config = exampleConfig();
  config.upstreams.push(
    exampleConfig({
      upstreams: [{ name: 'burst', transport: 'stdio', command: process.execPath, args: ['-e', BURST] }],
    }).upstreams[0]!,
  );
  gw = await startGateway(config);
  sid = await openSession(gw.url);
});
afterAll(() => gw?.stop());

const headers = () => ({ 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
const call = (id: number, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

describe('large messages across event-loop turns (stdio upstream)', () => {
  it('echoes 3 MB (1.4 M characters) of mixed one-, two-, three- and four-byte characters exactly, as one chunked JSON reply', async () => {
    // 7 UTF-16 units a round: the pairs fall on odd and even offsets alike, so some straddle a slice boundary.
    const text = 'aé€😀b😀'.repeat(200_000);
    expect(text.length).toBeGreaterThan(LARGE_TEXT_CHARS * 4);
    const res = await post(gw.url, call(1, 'echo__echo', { text }), headers());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    // Chunked: measuring a large reply's UTF-8 length would be one more pass over it in one turn.
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.json.id).toBe(1);
    expect(toolText(res.json.result)).toBe(text);
  });

  it('keeps a server order: a large progress notification read in one chunk with what follows it stays first', async () => {
    const res = await post(gw.url, call(2, 'burst__burst', {}, { progressToken: 'p' }), headers());
    expect(res.status).toBe(200);
    const messages = messagesOf(parseSse(res.text));
    expect(messages.map((m) => m.method ?? `answer ${m.id}`)).toEqual([
      'notifications/progress',
      'notifications/progress',
      'answer 2',
    ]);
    expect(messages[0].params.message).toBe('y'.repeat(400000));
    expect(messages[1].params.message).toBe('small');
  });

  it('delivers a large answer a server wrote just before it exited, rather than failing the call', async () => {
    const res = await post(gw.url, call(3, 'burst__last-words', {}), headers());
    expect(res.json.error).toBeUndefined();
    expect(toolText(res.json.result)).toBe('z'.repeat(400000));
  });

  it('answers another session while large calls are in flight, and leaves nothing held', async () => {
    const other = await openSession(gw.url);
    const text = 'x'.repeat(3 * 1024 * 1024);
    const large = Array.from({ length: 4 }, (_, i) => post(gw.url, call(10 + i, 'echo__echo', { text }), headers()));
    const small = await post(gw.url, call(20, 'echo__echo', { text: 'small' }), {
      'mcp-session-id': other,
      'mcp-protocol-version': '2025-06-18',
    });
    expect(toolText(small.json.result)).toBe('small');
    for (const res of await Promise.all(large)) expect(toolText(res.json.result)).toBe(text);
    await untilNothingHeld(gw);
  });
});
