/**
 * The request handler of a Streamable HTTP MCP server with one tool, JSON replies and no
 * sessions: for tests that need to see what reaches an upstream over HTTP(S), on a server of
 * their own making (node:http or node:https).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonRpcHandler, oneToolResult } from './json-rpc-http.js';

export function oneToolHandler(
  tool: string,
  answer: string,
  onRequest?: (req: IncomingMessage) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  const handle = jsonRpcHandler((msg) => ({ result: oneToolResult(msg, `${tool}-server`, tool, answer) }));
  return (req, res) => {
    onRequest?.(req);
    handle(req, res);
  };
}
