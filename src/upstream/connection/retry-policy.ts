import type { ExchangeFailure } from '../../contracts/exchange-failure.js';
import { LIST_METHODS } from '../../jsonrpc/list-methods.js';

/**
 * Requests that read and change nothing, so sending one again after a failure of unknown
 * effect is safe. `tools/call` is not among them: a tool may have side effects, and MCP has no
 * way to say it has none. `initialize` is not either: a second one would leave an orphan
 * session on the upstream (a failed start is retried by the pool instead).
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  'ping',
  ...LIST_METHODS.keys(),
  'prompts/get',
  'resources/read',
  'completion/complete',
]);

/**
 * Whether an exchange that failed this way may be tried again: always when the request never
 * left (a connection failure), otherwise only for idempotent requests and only for failures a
 * second try can cure (a broken connection or stream, a 5xx other than 501/505, a 429).
 */
export function isRetryable(method: string | undefined, failure: ExchangeFailure): boolean {
  if (failure.kind === 'connect') return true;
  if (method === undefined || !IDEMPOTENT_METHODS.has(method)) return false;
  switch (failure.kind) {
    case 'sent':
    case 'cut':
      return true;
    case 'status':
      return (
        failure.status === 429 ||
        (failure.status !== undefined && failure.status >= 500 && failure.status !== 501 && failure.status !== 505)
      );
    default:
      return false;
  }
}
