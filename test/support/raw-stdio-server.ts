/**
 * The source of a stdio MCP server in a few lines (raw JSON-RPC, no SDK), run with `node -e` (or
 * written to a file): `answer` is the body of `function answer(m)`, which returns the result of
 * request `m`; `send` writes a message. The process ends when its stdin does.
 */
export function rawStdioServer(answer: string, preamble = ''): string {
  return `
${preamble}
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
function answer(m) { ${answer} }
let buf = '';
process.stdin.on('data', (c) => {
  buf += c;
  let nl;
  while ((nl = buf.indexOf('\\n')) !== -1) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, result: answer(m) });
  }
});
process.stdin.on('end', () => process.exit(0));
`;
}
