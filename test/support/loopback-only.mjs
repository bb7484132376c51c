// Preloaded (`node --import`) into third-party servers that listen on every interface, such as
// @modelcontextprotocol/server-everything (`app.listen(PORT)`): binds every TCP listen to
// 127.0.0.1 instead, and reports the port it got on stderr as `LOOPBACK_LISTENING <port>`, so a
// test can ask for port 0 and learn the real one.
import net from 'node:net';

const listen = net.Server.prototype.listen;

/** @this {net.Server} @param {any[]} args */
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === 'object' && first !== null && !Array.isArray(first) && first.path === undefined) {
    args[0] = { ...first, host: '127.0.0.1' };
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const callback = args.find((a) => typeof a === 'function');
    args = callback ? [Number(first), '127.0.0.1', callback] : [Number(first), '127.0.0.1'];
  }
  this.once('listening', () => {
    const address = this.address();
    if (address && typeof address === 'object') process.stderr.write(`LOOPBACK_LISTENING ${address.port}\n`);
  });
  return listen.apply(this, /** @type {any} */ (args));
};
