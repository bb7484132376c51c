/**
 * The source of a stdio MCP server's read loop (raw JSON-RPC, no SDK), for servers run with
 * `node -e` (or written to a file): `onMessage` is the body run for each message `m` read from
 * stdin (one JSON value a line; it may `continue` to skip one). The process ends when its stdin does.
 */
export function stdioLoop(onMessage: string): string {
  return `
let buf = '';
process.stdin.on('data', (c) => {
  buf += c;
  let nl;
  while ((nl = buf.indexOf('\\n')) !== -1) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    ${onMessage}
  }
});
process.stdin.on('end', () => process.exit(0));
`;
}

/**
 * The source of a stdio MCP server in a few lines: `answer` is the body of `function answer(m)`,
 * which returns the result of request `m`; `send` writes a message; `beforeAnswer`, if given, is
 * the body of `function beforeAnswer(m)`, run first for each request (to send or write something
 * before the answer). Messages without a method (answers to the server's own requests) get no answer.
 */
export function rawStdioServer(answer: string, preamble = '', beforeAnswer = ''): string {
  return `
${preamble}
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
function answer(m) { ${answer} }
function beforeAnswer(m) { ${beforeAnswer} }
${stdioLoop(`if (m.id === undefined || m.method === undefined) continue;
    beforeAnswer(m);
    send({ jsonrpc: '2.0', id: m.id, result: answer(m) });`)}`;
}
