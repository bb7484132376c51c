/** What the status report lets through of free text, and how the page escapes what it shows. */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/server/status/report.js';
import { escapeHtml } from '../../src/server/status/view.js';

describe('redact', () => {
  it('drops URL credentials, query strings and fragments, keeping scheme, host and path', () => {
    expect(redact('GET https://u:p4ss@api.example.com:8443/v1/mcp?api_key=abc&x=1#frag failed')).toBe(
      'GET https://api.example.com:8443/v1/mcp failed',
    );
    expect(redact('cannot connect (ECONNREFUSED 127.0.0.1:9)')).toBe('cannot connect (ECONNREFUSED 127.0.0.1:9)');
    expect(redact('redis://:secret@r:6379/0')).toBe('redis://r:6379/0');
  });

  it('masks bearer tokens, API keys and passwords named in the text', () => {
    const out = redact('401 with Bearer eyJhbGciOi.payload.sig; api_key=k-123 token: t-456 password=hunter2');
    for (const secret of ['eyJhbGciOi', 'k-123', 't-456', 'hunter2']) expect(out).not.toContain(secret);
    expect(out).toContain('Bearer [redacted]');
  });

  it('bounds the text', () => {
    const out = redact('x'.repeat(10_000));
    expect(out.length).toBeLessThanOrEqual(301);
    expect(out.endsWith('…')).toBe(true);
  });
});

describe('escapeHtml', () => {
  it('escapes the five characters that matter in text and attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    expect(escapeHtml(42)).toBe('42');
  });
});
