// @ts-check
// call-json's load over legacy HTTP+SSE (GET /sse, POST /messages): see connection-call.mjs.
import { openLegacySse } from '../lib/connection-load.mjs';
import { connectionCall } from './connection-call.mjs';

export const name = 'call-legacy-sse';
export const kind = 'gateway';
export const description =
  'tools/call echo__echo over legacy HTTP+SSE (POST 202, reply on the session stream), one session per connection';
export const run = connectionCall(name, 'legacy-sse', openLegacySse);
