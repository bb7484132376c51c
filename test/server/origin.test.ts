/**
 * createOriginCheck as a module (DNS-rebinding protection): requests without Origin pass; a
 * browser page passes from a loopback origin or one the operator allowed, exactly; anything that
 * only looks like one does not.
 */
import { describe, expect, it } from 'vitest';
import { createOriginCheck } from '../../src/server/origin.js';

describe('createOriginCheck', () => {
  const check = createOriginCheck(['https://app.example.com/', 'HTTP://Intranet:8080']);

  it('lets through requests without Origin and pages of loopback origins, any port', () => {
    for (const o of [
      undefined,
      'http://localhost',
      'http://localhost:5173',
      'https://127.0.0.1:8443',
      'http://[::1]:3000',
      'HTTP://LOCALHOST:1',
    ]) {
      expect(check(o), String(o)).toBe(true);
    }
  });

  it('lets through the allowed origins, whatever their case or trailing slash in the config', () => {
    expect(check('https://app.example.com')).toBe(true);
    expect(check('http://intranet:8080')).toBe(true);
  });

  it('refuses every other origin, and what only looks like a loopback one', () => {
    for (const o of [
      'https://evil.example',
      'https://app.example.com:444',
      'http://app.example.com',
      'http://localhost.evil.example',
      'http://127.0.0.1.nip.io',
      'http://localhost:5173/path',
      'file://localhost',
      'null',
      '',
      'not a url',
    ]) {
      expect(check(o), o).toBe(false);
    }
  });
});
