// @ts-check
// Preloaded into the gateway by the idle-sessions scenario only (node --expose-gc --require …):
// SIGUSR2 runs a full garbage collection, so memory readings count what is retained, not
// garbage that happens not to be collected yet. Nothing else changes.
'use strict';

if (typeof globalThis.gc === 'function') {
  const gc = globalThis.gc;
  process.on('SIGUSR2', () => gc());
}
