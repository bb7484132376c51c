/** The circuit breaker and the retry policy of remote upstreams, on their own. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/jsonrpc/errors.js';
import { CircuitBreaker, type CircuitState } from '../../../src/upstream/connection/circuit-breaker.js';
import { ExchangeFailure } from '../../../src/contracts/exchange-failure.js';
import { isRetryable } from '../../../src/upstream/connection/retry-policy.js';

function breaker(failureThreshold = 3): { b: CircuitBreaker; states: CircuitState[] } {
  const b = new CircuitBreaker('up', { failureThreshold, openMs: 40, maxOpenMs: 80 });
  const states: CircuitState[] = [];
  b.onChange((s) => states.push(s));
  return { b, states };
}

const nextState = (b: CircuitBreaker) =>
  new Promise<CircuitState>((resolve) => {
    const off = b.onChange((s) => {
      off();
      resolve(s);
    });
  });

function openError(fn: () => void): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected UPSTREAM_CIRCUIT_OPEN');
}

describe('circuit breaker', () => {
  it('opens after failureThreshold consecutive failures; a success in between starts the count again', () => {
    const { b, states } = breaker(3);
    b.failure('x');
    b.failure('x');
    b.success();
    b.failure('x');
    b.failure('x');
    expect(b.state).toBe('closed');
    expect(() => b.check()).not.toThrow();
    b.failure('boom');
    expect(b.state).toBe('open');
    expect(states).toEqual(['open']);
    const err = openError(() => b.check());
    expect(err.type).toBe('UPSTREAM_CIRCUIT_OPEN');
    expect(err.toJsonRpc()).toMatchObject({
      code: -32011,
      data: { type: 'UPSTREAM_CIRCUIT_OPEN', retryable: true, upstream: 'up' },
    });
    expect(err.message).toContain('boom');
    b.close();
  });

  it('half-opens after openMs and lets exactly one probe through; its success closes the circuit', async () => {
    const { b } = breaker(1);
    b.failure('x');
    expect(await nextState(b)).toBe('half-open');
    expect(() => b.check()).not.toThrow();
    expect(openError(() => b.check()).type).toBe('UPSTREAM_CIRCUIT_OPEN');
    b.success();
    expect(b.state).toBe('closed');
    expect(b.status()).toEqual({ circuit: 'closed', consecutiveFailures: 0 });
    b.close();
  });

  it('a failed probe opens it again; trip() opens it at once', async () => {
    const { b, states } = breaker(5);
    b.trip('health check failed');
    expect(b.state).toBe('open');
    expect(b.status()).toMatchObject({ circuit: 'open', lastFailure: 'health check failed' });
    expect(await nextState(b)).toBe('half-open');
    b.check();
    b.failure('still down');
    expect(b.state).toBe('open');
    expect(states).toEqual(['open', 'half-open', 'open']);
    b.close();
  });
});

describe('retry policy', () => {
  it('sends anything again that never left, and only idempotent requests after a failure of unknown effect', () => {
    const connect = new ExchangeFailure('connect', 'refused');
    const sent = new ExchangeFailure('sent', 'reset');
    const s503 = new ExchangeFailure('status', 'HTTP 503', 503);
    const s501 = new ExchangeFailure('status', 'HTTP 501', 501);
    const garbage = new ExchangeFailure('protocol', 'not json');
    for (const m of ['tools/call', 'initialize', undefined, 'resources/read'])
      expect(isRetryable(m, connect)).toBe(true);
    expect(isRetryable('tools/call', sent)).toBe(false);
    expect(isRetryable('tools/call', s503)).toBe(false);
    expect(isRetryable('initialize', sent)).toBe(false);
    for (const m of ['tools/list', 'resources/read', 'prompts/get', 'ping']) {
      expect(isRetryable(m, sent)).toBe(true);
      expect(isRetryable(m, s503)).toBe(true);
      expect(isRetryable(m, s501)).toBe(false);
      expect(isRetryable(m, garbage)).toBe(false);
    }
  });

  it('maps each failure to one entry of the error table', () => {
    expect(new ExchangeFailure('status', 'x', 429, 2000).toGatewayError('u').toJsonRpc().data).toMatchObject({
      type: 'OVERLOADED',
      retryAfterMs: 2000,
      httpStatus: 429,
    });
    expect(new ExchangeFailure('status', 'x', 503).toGatewayError('u').type).toBe('UPSTREAM_UNAVAILABLE');
    expect(new ExchangeFailure('status', 'x', 401).toGatewayError('u').type).toBe('UPSTREAM_PROTOCOL_ERROR');
    expect(new ExchangeFailure('timeout', 'x').toGatewayError('u').type).toBe('UPSTREAM_TIMEOUT');
    expect(new ExchangeFailure('cut', 'x').toGatewayError('u').type).toBe('UPSTREAM_UNAVAILABLE');
    expect(new ExchangeFailure('status', 'x', 429).countsAsFailure).toBe(false);
  });
});
