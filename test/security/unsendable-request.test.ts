/**
 * A request the wire cannot carry — JSON.stringify throws on it, as on a 10,000-level nesting —
 * fails at once with a typed error and leaves no in-flight entry behind, so the worker's slot is
 * free again. The door refuses such bodies first (door.test.ts); this is the line behind it, on
 * the connection every upstream worker uses, with the same serialisation a stdio worker does.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/messages.js';
import { JsonRpcConnection } from '../../src/upstream/connection/json-rpc-connection.js';

function connection(lines: string[]): JsonRpcConnection {
  return new JsonRpcConnection((m: JsonRpcMessage) => lines.push(JSON.stringify(m)), {
    onRequest: async () => ({}),
    onNotification: () => undefined,
    onProtocolError: () => undefined,
    onCallSettled: () => undefined,
  });
}

describe('a request that cannot be serialised', () => {
  it('rejects with INVALID_PARAMS and frees its slot; the next call goes out', async () => {
    const lines: string[] = [];
    const c = connection(lines);
    const deep = JSON.parse('['.repeat(20_000) + ']'.repeat(20_000)) as unknown;
    const bad = c.call('tools/call', { name: 't', arguments: { deep } });
    await expect(bad.promise).rejects.toBeInstanceOf(GatewayError);
    await bad.promise.catch((err: GatewayError) => expect(err.type).toBe('INVALID_PARAMS'));
    expect(c.inFlight).toBe(0);
    expect(lines).toHaveLength(0);

    const good = c.call('tools/call', { name: 't', arguments: {} });
    expect(c.inFlight).toBe(1);
    expect(lines).toHaveLength(1);
    c.receive({ jsonrpc: '2.0', id: good.id, result: { content: [] } });
    await expect(good.promise).resolves.toEqual({ content: [] });
    expect(c.inFlight).toBe(0);
  });

  it('a cyclic value (not from JSON, but from any caller) is refused the same way', async () => {
    const c = connection([]);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const call = c.call('tools/call', { name: 't', arguments: cyclic });
    await expect(call.promise).rejects.toThrow(/cannot be sent/);
    expect(c.inFlight).toBe(0);
  });
});
