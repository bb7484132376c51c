// @ts-check
// call-json's load over WebSocket (/ws, subprotocol mcp): see connection-call.mjs.
import { openWebSocket } from '../lib/connection-load.mjs';
import { connectionCall } from './connection-call.mjs';

export const name = 'call-websocket';
export const kind = 'gateway';
export const description =
  'tools/call echo__echo over WebSocket (subprotocol mcp), one session per connection, closed loop';
export const run = connectionCall(name, 'websocket', openWebSocket);
