/**
 * Deadlines and cancellation, end to end: the idle timeout, progress extending it, the hard
 * maximum, and a client's notifications/cancelled reaching the upstream process itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTap, tappedStdio } from '../support/stdio-tap.js';
import {
  MCP_HEADERS,
  SLOW_SERVER,
  exampleConfig,
  openSession,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { internals } from '../../src/gateway/internals.js';

const PROTOCOL = '2025-06-18';

interface CallReply {
  status: number;
  contentType: string;
  /** Everything that arrived for the call, in order (progress notifications, then the response). */
  messages: any[];
  progress: any[];
  response: any;
}

/**
 * POSTs one request and reads the reply, JSON or SSE. `onMessage` sees each SSE message as it
 * arrives, so a test can act in the middle of a call.
 */
async function request(url: URL, sid: string, body: object, onMessage?: (m: any) => void): Promise<CallReply> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify(body),
  });
  const contentType = res.headers.get('content-type') ?? '';
  const messages: any[] = [];
  if (contentType.startsWith('text/event-stream')) {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n');
        if (!data) continue;
        const message = JSON.parse(data);
        messages.push(message);
        onMessage?.(message);
      }
    }
  } else {
    const text = await res.text();
    if (text) messages.push(JSON.parse(text));
  }
  return {
    status: res.status,
    contentType,
    messages,
    progress: messages.filter((m) => m.method === 'notifications/progress'),
    response: messages.find((m) => 'result' in m || 'error' in m),
  };
}

function toolCall(
  id: number | string,
  name: string,
  args: Record<string, unknown>,
  progressToken?: string | number,
): object {
  const params: Record<string, unknown> = { name, arguments: args };
  if (progressToken !== undefined) params._meta = { progressToken };
  return { jsonrpc: '2.0', id, method: 'tools/call', params };
}

function textOf(response: any): string {
  return (response?.result?.content ?? []).map((c: { text?: string }) => c.text ?? '').join('');
}

async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('deadlines (slow at timeoutMs 300, maxTimeoutMs 1500)', () => {
  let gw: RunningGateway;
  let sid: string;

  beforeAll(async () => {
    gw = await startGateway(
      exampleConfig({
        upstreams: [
          stdioUpstream('slow', SLOW_SERVER, { timeoutMs: 300, maxTimeoutMs: 1500, pool: { min: 1, max: 1 } }),
        ],
      }),
    );
    sid = await openSession(gw.url, PROTOCOL);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('answers a call that never returns with UPSTREAM_TIMEOUT (-32005)', async () => {
    const reply = await request(gw.url, sid, toolCall(1, 'slow__hang', {}));
    expect(reply.status).toBe(200);
    expect(reply.response.id).toBe(1);
    expect(reply.response.result).toBeUndefined();
    expect(reply.response.error.code).toBe(-32005);
    expect(reply.response.error.data.type).toBe('UPSTREAM_TIMEOUT');
    expect(reply.response.error.message).toContain('300 ms');
    expect(internals(gw.gateway.server).inFlight).toBe(0);

    // The worker is fine (the gateway cancelled the hung call, it did not kill anything).
    const after = await request(gw.url, sid, toolCall(2, 'slow__sleep', { ms: 10, steps: 0 }));
    expect(textOf(after.response)).toBe('slept 10ms');
  });

  it('lets progress extend the idle timeout: 1000 ms with progress every 100 ms succeeds', async () => {
    const reply = await request(gw.url, sid, toolCall(3, 'slow__sleep', { ms: 1000, steps: 10 }, 'tok-extend'));
    expect(reply.status).toBe(200);
    expect(reply.contentType).toMatch(/^text\/event-stream/);
    expect(reply.response.id).toBe(3);
    expect(reply.response.error).toBeUndefined();
    expect(textOf(reply.response)).toBe('slept 1000ms');
    // Every progress notification, with the client's own token, before the response.
    expect(reply.progress.map((p) => p.params.progress)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(reply.progress.every((p) => p.params.progressToken === 'tok-extend')).toBe(true);
    expect(reply.messages.at(-1)).toBe(reply.response);
  });

  it('still fails at the hard maximum however much progress arrives (-32005, hard limit)', async () => {
    const reply = await request(gw.url, sid, toolCall(4, 'slow__sleep', { ms: 3000, steps: 30 }, 44));
    expect(reply.status).toBe(200);
    expect(reply.response.id).toBe(4);
    expect(reply.response.result).toBeUndefined();
    expect(reply.response.error.code).toBe(-32005);
    expect(reply.response.error.data.type).toBe('UPSTREAM_TIMEOUT');
    expect(reply.response.error.message).toMatch(/hard limit/);
    expect(reply.response.error.message).toContain('1500 ms');
    // Progress did flow (so it was the hard limit, not the idle timeout, that ended the call)…
    expect(reply.progress.length).toBeGreaterThanOrEqual(5);
    expect(reply.progress.every((p) => p.params.progressToken === 44)).toBe(true);
    // …and never past the full 30 steps.
    expect(reply.progress.length).toBeLessThan(30);
    expect(internals(gw.gateway.server).inFlight).toBe(0);
  });
});

describe('cancellation', () => {
  let gw: RunningGateway;
  let sid: string;
  let dir: string;
  let tap: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcpgw-cancel-'));
    tap = join(dir, 'tap.log');
    gw = await startGateway(
      exampleConfig({
        upstreams: [
          stdioUpstream('slow', SLOW_SERVER, {
            ...tappedStdio(SLOW_SERVER, tap),
            pool: { min: 1, max: 1 },
          }),
        ],
      }),
    );
    sid = await openSession(gw.url, PROTOCOL);
  });

  afterAll(async () => {
    await gw?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers a cancelled call with REQUEST_CANCELLED (-32007) and forwards the cancel to the upstream', async () => {
    // The tap sees the slow server's traffic (sanity check of the test itself).
    const pidReply = await request(gw.url, sid, toolCall('pid-before', 'slow__pid', {}));
    const pid = JSON.parse(textOf(pidReply.response)).pid as number;
    expect(
      readTap(tap).some((t) => t.dir === 'IN' && t.message.method === 'tools/call' && t.message.params?.name === 'pid'),
    ).toBe(true);

    const requestId = 'sleep-to-cancel';
    let cancelPosted: Promise<{ status: number }> | undefined;
    const reply = await request(
      gw.url,
      sid,
      toolCall(requestId, 'slow__sleep', { ms: 5000, steps: 50 }, 'tok-cancel'),
      (m) => {
        // At the first progress the call is surely running upstream: cancel it.
        if (m.method === 'notifications/progress' && !cancelPosted) {
          cancelPosted = fetch(gw.url, {
            method: 'POST',
            headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL },
            body: JSON.stringify({
              jsonrpc: '2.0',
              method: 'notifications/cancelled',
              params: { requestId, reason: 'user pressed stop' },
            }),
          }).then(async (res) => {
            await res.text();
            return { status: res.status };
          });
        }
      },
    );
    expect(cancelPosted).toBeDefined();
    expect((await cancelPosted!).status).toBe(202);

    expect(reply.status).toBe(200);
    expect(reply.response.id).toBe(requestId);
    expect(reply.response.result).toBeUndefined();
    expect(reply.response.error.code).toBe(-32007);
    expect(reply.response.error.data.type).toBe('REQUEST_CANCELLED');
    expect(reply.response.error.message).toContain('user pressed stop');
    expect(reply.progress.length).toBeGreaterThanOrEqual(1);
    expect(reply.progress.length).toBeLessThan(50);
    expect(internals(gw.gateway.server).inFlight).toBe(0);

    // Long enough for several more progress steps (100 ms apart) had the upstream kept going.
    await new Promise((r) => setTimeout(r, 600));

    // What the upstream saw: the call, then a cancellation naming it, then nothing more about it.
    const lines = readTap(tap);
    const callIndex = lines.findIndex(
      (t) => t.dir === 'IN' && t.message.method === 'tools/call' && t.message.params?.name === 'sleep',
    );
    expect(callIndex).toBeGreaterThanOrEqual(0);
    const upstreamId = lines[callIndex]!.message.id;
    const cancelIndex = lines.findIndex(
      (t, i) =>
        i > callIndex &&
        t.dir === 'IN' &&
        t.message.method === 'notifications/cancelled' &&
        t.message.params?.requestId === upstreamId,
    );
    expect(cancelIndex).toBeGreaterThan(callIndex);
    const isAboutCall = (m: any) =>
      m.id === upstreamId || (m.method === 'notifications/progress' && m.params?.progressToken === upstreamId);
    const progressBefore = lines.slice(callIndex, cancelIndex).filter((t) => t.dir === 'OUT' && isAboutCall(t.message));
    expect(progressBefore.length).toBeGreaterThanOrEqual(1);
    const after = lines.slice(cancelIndex + 1).filter((t) => t.dir === 'OUT' && isAboutCall(t.message));
    expect(after).toEqual([]);

    // The worker is still healthy: same process, and it answers.
    const next = await request(gw.url, sid, toolCall('after-cancel', 'slow__sleep', { ms: 10, steps: 0 }));
    expect(textOf(next.response)).toBe('slept 10ms');
    const pidAfter = await request(gw.url, sid, toolCall('pid-after', 'slow__pid', {}));
    expect(JSON.parse(textOf(pidAfter.response)).pid).toBe(pid);
  });

  it('ignores a cancel for an id that is not in flight, and one from another session', async () => {
    const other = await openSession(gw.url, PROTOCOL);
    const requestId = 5;
    const sleeping = request(gw.url, sid, toolCall(requestId, 'slow__sleep', { ms: 400, steps: 0 }));
    await until(() => internals(gw.gateway.server).inFlight === 1, 5000, 'the sleep to be in flight');

    const cancel = (session: string, id: number) =>
      fetch(gw.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } }),
      }).then((res) => res.status);
    // Same id, other session: a client can only cancel its own requests.
    expect(await cancel(other, requestId)).toBe(202);
    // Right session, wrong id.
    expect(await cancel(sid, requestId + 1)).toBe(202);

    const reply = await sleeping;
    expect(reply.response.error).toBeUndefined();
    expect(textOf(reply.response)).toBe('slept 400ms');
  });
});
