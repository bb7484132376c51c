/**
 * The gateway's requestState around a 2026-07-28 upstream's, on its own: what binds it, when it
 * expires, what it lets through, and the bounds on what an upstream may put in it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import { UpstreamRounds } from '../../src/stateless/upstream-rounds.js';
import type { RequestContext } from '../../src/contracts/request-context.js';

const ctx = (principal?: string, capabilities: Record<string, unknown> = { elicitation: {} }): RequestContext => ({
  protocolVersion: '2026-07-28',
  stateless: true,
  clientCapabilities: capabilities,
  clientInfo: { name: 'unit', version: '1' },
  principal,
  scope: 's',
  sink: { send: () => true },
  sessionSink: undefined,
});
const params = { name: 't', arguments: { b: 1, a: [1, { z: 2 }] } };
const asked = {
  resultType: 'input_required',
  inputRequests: { q: { method: 'elicitation/create', params: {} } },
  requestState: 'upstream-state',
};

function refused(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('not refused');
}

async function refusedLater(p: Promise<unknown>): Promise<GatewayError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof GatewayError) return err;
  throw err ?? new Error('not refused');
}

afterEach(() => vi.useRealTimers());

describe('UpstreamRounds', () => {
  it('round-trips: the upstream gets its own state and the answers it asked for, the client _meta as 2026 spells it', async () => {
    const rounds = new UpstreamRounds({ ttlMs: 60_000, maxRounds: 5 });
    const out = rounds.incoming(ctx('p'), 'up', 'tools/call', params, asked, 0);
    expect(out.requestState).not.toBe('upstream-state');
    // The same arguments in another key order are the same request.
    const retry = await rounds.outgoing(ctx('p'), 'up', 'tools/call', {
      name: 't',
      arguments: { a: [1, { z: 2 }], b: 1 },
      requestState: out.requestState,
      inputResponses: { q: { action: 'accept' }, x: {} },
      _meta: { traceparent: 'tp', 'io.modelcontextprotocol/clientInfo': { name: 'spoofed' } },
    });
    expect(retry.round).toBe(1);
    expect(retry.params.requestState).toBe('upstream-state');
    expect(retry.params.inputResponses).toEqual({ q: { action: 'accept' } });
    expect(retry.params._meta).toEqual({
      traceparent: 'tp',
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
      'io.modelcontextprotocol/clientInfo': { name: 'unit', version: '1' },
    });
  });

  it('is bound to the arguments, and expires', async () => {
    vi.useFakeTimers();
    const rounds = new UpstreamRounds({ ttlMs: 1000, maxRounds: 5 });
    const state = rounds.incoming(ctx(), 'up', 'tools/call', params, asked, 0).requestState;
    expect(
      (
        await refusedLater(
          rounds.outgoing(ctx(), 'up', 'tools/call', { ...params, arguments: { b: 2 }, requestState: state }),
        )
      ).message,
    ).toContain('another request');
    expect(
      (await refusedLater(rounds.outgoing(ctx(), 'other', 'tools/call', { ...params, requestState: state }))).message,
    ).toContain('another request');
    vi.advanceTimersByTime(1001);
    expect(
      (await refusedLater(rounds.outgoing(ctx(), 'up', 'tools/call', { ...params, requestState: state }))).message,
    ).toContain('expired');
  });

  it('a state signed with another secret (another gateway) is refused; the same secret verifies it', async () => {
    const a = new UpstreamRounds({ secret: 'x'.repeat(32), ttlMs: 60_000, maxRounds: 5 });
    const b = new UpstreamRounds({ secret: 'y'.repeat(32), ttlMs: 60_000, maxRounds: 5 });
    const c = new UpstreamRounds({ secret: 'x'.repeat(32), ttlMs: 60_000, maxRounds: 5 });
    const state = a.incoming(ctx(), 'up', 'tools/call', params, asked, 0).requestState;
    expect((await refusedLater(b.outgoing(ctx(), 'up', 'tools/call', { ...params, requestState: state }))).type).toBe(
      'REQUEST_STATE_INVALID',
    );
    expect((await c.outgoing(ctx(), 'up', 'tools/call', { ...params, requestState: state })).round).toBe(1);
  });

  it('bounds the rounds and what an upstream may put in a round', () => {
    const rounds = new UpstreamRounds({ ttlMs: 60_000, maxRounds: 2 });
    expect(rounds.incoming(ctx(), 'up', 'tools/call', params, asked, 1).requestState).toBeTypeOf('string');
    expect(refused(() => rounds.incoming(ctx(), 'up', 'tools/call', params, asked, 2)).type).toBe(
      'INPUT_ROUNDS_EXCEEDED',
    );
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, { method: 'roots/list' }]));
    expect(
      refused(() => rounds.incoming(ctx(), 'up', 'tools/call', params, { ...asked, inputRequests: many }, 0)).type,
    ).toBe('UPSTREAM_PROTOCOL_ERROR');
    expect(
      refused(() =>
        rounds.incoming(ctx(), 'up', 'tools/call', params, { ...asked, requestState: 'x'.repeat(70_000) }, 0),
      ).type,
    ).toBe('UPSTREAM_PROTOCOL_ERROR');
    expect(
      refused(() => rounds.incoming(ctx(), 'up', 'tools/call', params, { ...asked, requestState: 42 }, 0)).type,
    ).toBe('UPSTREAM_PROTOCOL_ERROR');
    // A complete result passes untouched.
    expect(rounds.incoming(ctx(), 'up', 'tools/call', params, { content: [] }, 9)).toEqual({ content: [] });
  });
});
