/**
 * What a 2025 upstream sees of a stateless (2026-07-28) request's params: the gateway's own
 * `_meta` keys (io.modelcontextprotocol/…) and the input-required round-trip fields go, the
 * client's own keys stay, "__proto__" among them as a plain key (JSON.parse makes such keys).
 */
import { describe, expect, it } from 'vitest';
import { upstreamParams } from '../../src/stateless/result-shape.js';

describe('upstreamParams', () => {
  it('drops the reserved _meta keys, inputResponses and requestState, and keeps the rest', () => {
    const params = {
      name: 'echo',
      arguments: { text: 'hi' },
      inputResponses: { a: {} },
      requestState: 'opaque',
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', progressToken: 7, 'com.example/trace': 'x' },
    };
    expect(upstreamParams(params)).toEqual({
      name: 'echo',
      arguments: { text: 'hi' },
      _meta: { progressToken: 7, 'com.example/trace': 'x' },
    });
    // The caller's object is not changed.
    expect(params._meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
  });

  it('leaves no _meta when only reserved keys were in it', () => {
    expect(upstreamParams({ name: 'echo', _meta: { 'io.modelcontextprotocol/clientInfo': {} } })).toEqual({
      name: 'echo',
    });
  });

  it('keeps "__proto__" as an own key, in params and in _meta, without touching any prototype', () => {
    const params = JSON.parse(
      '{"name":"echo","__proto__":{"polluted":true},"_meta":{"__proto__":{"polluted":true},"k":1}}',
    ) as Record<string, unknown>;
    const out = upstreamParams(params)!;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(JSON.stringify(out)).toBe(
      '{"name":"echo","__proto__":{"polluted":true},"_meta":{"__proto__":{"polluted":true},"k":1}}',
    );
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('passes undefined params through', () => {
    expect(upstreamParams(undefined)).toBeUndefined();
  });
});
