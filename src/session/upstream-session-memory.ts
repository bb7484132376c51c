import type { Logger } from 'pino';
import { isObject } from '../jsonrpc/messages.js';
import type { SessionStore } from './session-store.js';
import type { UpstreamResumeState, UpstreamSessionMemory } from '../contracts/upstream.js';

function isResumeState(v: unknown): v is UpstreamResumeState {
  return (
    isObject(v) && typeof v.sessionId === 'string' && isObject(v.info) && typeof v.info.protocolVersion === 'string'
  );
}

/**
 * A scope's upstream session, kept in the client's session record (so in Redis when sessions
 * are): the replica that takes over a dead owner's worker continues the same upstream session.
 * Two upstreams of one session recording at the same instant may lose one write; that worker
 * then simply starts a new upstream session when it next moves.
 */
export function upstreamSessionMemory(
  store: SessionStore,
  upstream: string,
  scope: string,
  log: Logger,
): UpstreamSessionMemory {
  return {
    recall: async () => {
      const state = (await store.get(scope))?.upstreamSessions?.[upstream];
      return isResumeState(state) ? state : undefined;
    },
    remember: (state) =>
      (async () => {
        const record = await store.get(scope);
        if (!record) return;
        const sessions = { ...record.upstreamSessions };
        if (state) sessions[upstream] = state;
        else delete sessions[upstream];
        await store.update(scope, { upstreamSessions: sessions });
      })().catch((err: unknown) =>
        log.warn({ upstream, err: (err as Error).message }, 'could not record the upstream session'),
      ),
  };
}
