// One connection to an MCP server the gateway calls for itself (an interceptor server), built by
// the same wires as an upstream's workers: a child process or a Streamable HTTP session. No pool,
// no health probes: whoever holds it decides when to start it again.
import type { Logger } from 'pino';
import type { UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { LogThrottle } from '../observability/log-throttle.js';
import type { DataPathEvents } from '../observability/events.js';
import { createRemoteUpstream } from './remote.js';
import { StdioUpstream } from './wires/stdio.js';
import type { ClientIdentity, UpstreamConnection, UpstreamPeer } from '../contracts/upstream.js';

export interface SingleConnection {
  readonly connection: UpstreamConnection;
  /** Ends the connection (the child, or the session and its HTTP pool). */
  close(): Promise<void>;
}

/** Such a server is nobody's client's: it may ask nothing of one. */
const NO_PEER: UpstreamPeer = {
  request: async (method) => {
    throw new GatewayError('METHOD_NOT_FOUND', `${method} is not available to a server the gateway calls itself`);
  },
  notification: () => undefined,
};

export function singleConnection(
  config: UpstreamConfig,
  identity: ClientIdentity,
  log: Logger,
  diagnostics: DataPathEvents,
): SingleConnection {
  if (config.transport === 'stdio') {
    const connection = new StdioUpstream(config, identity, log, 0, NO_PEER, {
      diagnostics,
      throttle: new LogThrottle(),
    });
    return { connection, close: () => connection.close() };
  }
  const remote = createRemoteUpstream(config, identity, log, diagnostics);
  const connection = remote.createWorker(identity, 0, NO_PEER);
  return {
    connection,
    close: async () => {
      await connection.close().catch(() => undefined);
      await remote.close();
    },
  };
}
