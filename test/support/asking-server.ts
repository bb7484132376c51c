/**
 * A stdio MCP server (raw JSON-RPC) whose `ask_then_work {seconds}` asks its client one
 * elicitation per call, then answers `worked for <the answer's content>` `seconds` after the
 * client answered; `hello` answers at once. For a client's answers to a worker's requests.
 * `ask_secret {method}` asks (elicitation/create, or sampling/createMessage) with LEAKED_KEY in its
 * message, then says what came back as the upstream saw it: `error <code> <data.type>`, or whether
 * the answer held ANSWER_CARD (`answer held the card: yes|no`): for the guardrails on asks.
 */
import { stdioLoop } from './raw-stdio-server.js';

/** AWS's documented example key id: what `ask_secret` puts in its question. */
export const LEAKED_KEY = 'AKIAIOSFODNN7EXAMPLE';
/** A Luhn-valid card number (Visa's test one), for a client to answer `ask_secret` with. */
export const ANSWER_CARD = '4111 1111 1111 1111';

export const ASKING_SERVER = `
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const waiting = new Map();
let next = 1;
${stdioLoop(`if (m.method === undefined) { const call = waiting.get(m.id); waiting.delete(m.id); if (call) call(m); continue; }
    if (m.id === undefined) continue;
    if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'asking', version: '1' } } });
    else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'ask_then_work', inputSchema: { type: 'object', properties: { seconds: { type: 'number' } } } }, { name: 'hello', inputSchema: { type: 'object' } }, { name: 'ask_secret', inputSchema: { type: 'object', properties: { method: { type: 'string' } } } }] } });
    else if (m.method === 'tools/call' && m.params.name === 'ask_secret') {
      const q = 'q' + next++;
      const sampling = m.params.arguments.method === 'sampling/createMessage';
      waiting.set(q, (a) => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: a.error ? 'error ' + a.error.code + ' ' + (a.error.data && a.error.data.type) : 'answer held the card: ' + (JSON.stringify(a.result).includes('${ANSWER_CARD}') ? 'yes' : 'no') }] } }));
      const text = 'Deploy with ${LEAKED_KEY}?';
      send({ jsonrpc: '2.0', id: q, method: sampling ? 'sampling/createMessage' : 'elicitation/create', params: sampling ? { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens: 50 } : { mode: 'form', message: text, requestedSchema: { type: 'object', properties: { note: { type: 'string' } } } } });
    } else if (m.method === 'tools/call' && m.params.name === 'ask_then_work') {
      const q = 'q' + next++;
      waiting.set(q, (answer) => setTimeout(() => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'worked for ' + JSON.stringify(answer.result.content) }] } }), (m.params.arguments.seconds || 0) * 1000));
      send({ jsonrpc: '2.0', id: q, method: 'elicitation/create', params: { mode: 'form', message: 'Who?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } });
    } else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'hello' }] } });
    else send({ jsonrpc: '2.0', id: m.id, result: {} });`)}`;

/** Its upstream entry (stdio, a worker per session); `extra` is merged in. */
export function askingUpstream(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: ['-e', ASKING_SERVER],
    mode: 'per-session',
    pool: { max: 8 },
    ...extra,
  };
}
