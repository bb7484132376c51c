/**
 * Wrapped task ids on their own: signed for their caller under the shared secret, with the
 * purpose `taskId/wrapped`, and, for one release, the format before the signed-token helper
 * still read (a task lives up to a day, so ids handed out before a rolling upgrade outlive it).
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/contracts/request-context.js';
import { SignedTokens } from '../../src/contracts/signed-token.js';
import { TaskPassThrough } from '../../src/tasks/pass-through.js';
import type { UpstreamEntry } from '../../src/gateway/upstream-entry.js';
import { GatewayError } from '../../src/jsonrpc/errors.js';

const SECRET = 'k'.repeat(32);
const upstreams = new Map([['up', {} as UpstreamEntry]]);

const session = (scope: string, principal?: string): RequestContext => ({
  protocolVersion: '2025-11-25',
  stateless: false,
  clientCapabilities: {},
  clientInfo: { name: 'unit', version: '1' },
  principal,
  scope,
  sink: { send: () => true },
  sessionSink: undefined,
});
const stateless = (principal?: string): RequestContext => ({
  ...session('s-modern', principal),
  protocolVersion: '2026-07-28',
  stateless: true,
});

/** A wrapped id as the gateway made it before the helper, byte for byte (what a running task may still carry). */
function oldFormatId(ctx: RequestContext, upstream: string, id: string): string {
  const body = Buffer.from(JSON.stringify([upstream, id]), 'utf8').toString('base64url');
  const era = ctx.stateless ? 'modern' : 'legacy';
  const binding = ctx.principal !== undefined ? `p:${ctx.principal}` : ctx.stateless ? 'anonymous' : `s:${ctx.scope}`;
  const mac = createHmac('sha256', Buffer.from(`tasks:${SECRET}`, 'utf8'))
    .update(`${era}\u0000${binding}\u0000${body}`)
    .digest('base64url');
  return `u.${body}.${mac}`;
}

function notFound(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err.type;
    throw err;
  }
  return undefined;
}

describe('TaskPassThrough wrapped ids', () => {
  it('wraps and unwraps for the same caller on any replica sharing the secret, for nobody else', () => {
    const a = new TaskPassThrough(upstreams, SECRET);
    const b = new TaskPassThrough(upstreams, SECRET);
    const mine = session('one');
    const wrapped = a.wrap(mine, 'up', 'task-7');
    expect(TaskPassThrough.isWrapped(wrapped)).toBe(true);
    expect(b.unwrap(mine, wrapped)).toEqual({ upstream: 'up', id: 'task-7' });
    expect(notFound(() => b.unwrap(session('two'), wrapped))).toBe('TASK_NOT_FOUND');
    expect(notFound(() => b.unwrap(stateless(), wrapped))).toBe('TASK_NOT_FOUND');
    expect(notFound(() => new TaskPassThrough(upstreams, 'o'.repeat(32)).unwrap(mine, wrapped))).toBe('TASK_NOT_FOUND');
    // Bound to a principal, it follows the principal across sessions and eras stay apart.
    const alice = a.wrap(stateless('alice'), 'up', 'task-8');
    expect(b.unwrap(stateless('alice'), alice)).toEqual({ upstream: 'up', id: 'task-8' });
    expect(notFound(() => b.unwrap(session('one', 'alice'), alice))).toBe('TASK_NOT_FOUND');
  });

  it('a token of another purpose under the same secret is no task id', () => {
    const tokens = new SignedTokens(SECRET);
    const ctx = session('one');
    const forged = `u.${tokens.sign('requestState/upstream-round', ['up', 'task-7'], { binding: 'legacy\u0000s:one' })}`;
    expect(notFound(() => new TaskPassThrough(upstreams, SECRET).unwrap(ctx, forged))).toBe('TASK_NOT_FOUND');
    const right = `u.${tokens.sign('taskId/wrapped', ['up', 'task-7'], { binding: 'legacy\u0000s:one' })}`;
    expect(new TaskPassThrough(upstreams, SECRET).unwrap(ctx, right)).toEqual({ upstream: 'up', id: 'task-7' });
  });

  it('an old-format id (before the signed-token helper) still resolves, for its own caller only', () => {
    const pass = new TaskPassThrough(upstreams, SECRET);
    for (const ctx of [session('one'), session('one', 'alice'), stateless(), stateless('bob')]) {
      expect(pass.unwrap(ctx, oldFormatId(ctx, 'up', 'old-1'))).toEqual({ upstream: 'up', id: 'old-1' });
    }
    const old = oldFormatId(session('one'), 'up', 'old-1');
    const mac = old.split('.')[2]!;
    expect(notFound(() => pass.unwrap(session('two'), old))).toBe('TASK_NOT_FOUND');
    expect(notFound(() => pass.unwrap(stateless(), old))).toBe('TASK_NOT_FOUND');
    expect(notFound(() => pass.unwrap(session('one'), `${old}x`))).toBe('TASK_NOT_FOUND');
    expect(notFound(() => pass.unwrap(session('one'), `${old}.${mac}`))).toBe('TASK_NOT_FOUND');
    // Another upstream under the same MAC, or one the gateway no longer has: not found either way.
    const rerouted = `u.${Buffer.from(JSON.stringify(['gone', 'old-1'])).toString('base64url')}.${mac}`;
    expect(notFound(() => pass.unwrap(session('one'), rerouted))).toBe('TASK_NOT_FOUND');
    expect(notFound(() => pass.unwrap(session('one'), oldFormatId(session('one'), 'gone', 'old-1')))).toBe(
      'TASK_NOT_FOUND',
    );
  });

  it("without a shared secret no old-format id verifies (the old key was another process's)", () => {
    const pass = new TaskPassThrough(upstreams, undefined);
    expect(notFound(() => pass.unwrap(session('one'), oldFormatId(session('one'), 'up', 'old-1')))).toBe(
      'TASK_NOT_FOUND',
    );
    expect(pass.unwrap(session('one'), pass.wrap(session('one'), 'up', 'new-1'))).toEqual({
      upstream: 'up',
      id: 'new-1',
    });
  });
});
