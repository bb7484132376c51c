// @ts-check
// Preloaded (node --require) into each server whose tool list capture.mjs takes: any connection
// or DNS lookup beyond loopback is refused and reported on stderr (`OUTBOUND <what>`), so a
// capture proves the server listed its tools without calling out.
'use strict';

const net = require('node:net');
const dns = require('node:dns');

const LOOPBACK = /^(127\.|::1$|localhost$)/;
const report = (/** @type {string} */ what) => process.stderr.write(`OUTBOUND ${what}\n`);

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function patchedConnect(/** @type {any[]} */ ...args) {
  const o = args[0];
  const host = typeof o === 'object' && o !== null ? (o.host ?? (o.path ? 'localhost' : 'localhost')) : args[1];
  if (typeof host === 'string' && !LOOPBACK.test(host)) {
    report(`connect ${host}`);
    throw new Error(`outbound connection refused: ${host}`);
  }
  return connect.apply(this, /** @type {any} */ (args));
};

for (const name of /** @type {const} */ (['lookup', 'resolve', 'resolve4', 'resolve6'])) {
  const original = dns[name];
  // @ts-ignore -- same signature, refused beyond loopback
  dns[name] = function patched(/** @type {any[]} */ ...args) {
    if (typeof args[0] === 'string' && !LOOPBACK.test(args[0])) {
      report(`dns ${args[0]}`);
      const cb = args[args.length - 1];
      if (typeof cb === 'function') return cb(new Error(`outbound lookup refused: ${args[0]}`));
      throw new Error(`outbound lookup refused: ${args[0]}`);
    }
    // @ts-ignore
    return original.apply(this, args);
  };
}

if (typeof globalThis.fetch === 'function') {
  const fetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    if (!LOOPBACK.test(url.hostname)) {
      report(`fetch ${url.origin}`);
      throw new Error(`outbound fetch refused: ${url.origin}`);
    }
    return fetch(input, init);
  };
}
