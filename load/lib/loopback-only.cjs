// @ts-check
// Preloaded (node --require) into the peer bridges: a server that listens without naming a host
// (e.g. express's app.listen(port)) would listen on every interface; this makes it listen on
// 127.0.0.1 only. A listen call that names a host is left alone.
'use strict';

const net = require('node:net');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function patchedListen(/** @type {any[]} */ ...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (
    first &&
    typeof first === 'object' &&
    'port' in first &&
    first.path === undefined &&
    first.host === undefined
  ) {
    args[0] = { ...first, host: '127.0.0.1' };
  }
  return listen.apply(this, /** @type {any} */ (args));
};
