// @ts-check
// A stdio MCP server with slow, failing and misbehaving tools, used to exercise
// progress, cancellation, timeouts and crash handling in the gateway.
//
// stdout is the JSON-RPC channel: never print anything else to it.
// Diagnostics go to stderr.
//
// Tools: sleep {ms, steps}, crash {}, hang {}, pid {}, fail {}

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
// zod 4.x is installed (hoisted) as a dependency of the SDK; the SDK accepts
// both zod v3 (>=3.25) and v4 schemas.
import { z } from 'zod';
import { abortError, sleep } from '../lib/abortable-sleep.mjs';

/** @param {string} msg */
function log(msg) {
  process.stderr.write(`[slow ${process.pid}] ${msg}\n`);
}

const server = new McpServer({ name: 'slow', version: '0.1.0' });

server.registerTool(
  'sleep',
  {
    description:
      'Sleeps for `ms` milliseconds, sending `steps` progress notifications (when the request carries a progressToken). Honours cancellation.',
    inputSchema: {
      ms: z.number().min(0).default(1000).describe('Total time to sleep in milliseconds'),
      steps: z.number().int().min(0).default(10).describe('Number of progress notifications'),
    },
  },
  async ({ ms, steps }, extra) => {
    const progressToken = extra._meta?.progressToken;
    if (steps <= 0) {
      await sleep(ms, extra.signal);
    } else {
      const stepMs = ms / steps;
      for (let i = 1; i <= steps; i++) {
        await sleep(stepMs, extra.signal);
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: i, total: steps, message: `step ${i} of ${steps}` },
          });
        }
      }
    }
    return { content: [{ type: 'text', text: `slept ${ms}ms` }] };
  },
);

server.registerTool(
  'crash',
  { description: 'Kills the server process mid-call (exit code 1) without answering.' },
  async () => {
    process.stderr.write(`[slow ${process.pid}] crash tool called, exiting with code 1\n`);
    process.exit(1);
  },
);

server.registerTool(
  'hang',
  { description: 'Never answers; only ends when the request is cancelled.' },
  (extra) =>
    new Promise((_resolve, reject) => {
      if (extra.signal.aborted) return reject(abortError(extra.signal));
      extra.signal.addEventListener('abort', () => reject(abortError(extra.signal)), { once: true });
    }),
);

server.registerTool(
  'pid',
  { description: 'Returns the process id of the server process that handled the call.' },
  async () => ({ content: [{ type: 'text', text: JSON.stringify({ pid: process.pid }) }] }),
);

server.registerTool('fail', { description: 'Always returns a tool error result (isError: true).' }, async () => ({
  content: [{ type: 'text', text: 'tool failed on purpose' }],
  isError: true,
}));

server.server.onerror = (/** @type {unknown} */ err) =>
  log(`error: ${err instanceof Error ? err.message : String(err)}`);

// Exit promptly when the client closes our stdin (e.g. the gateway shuts the worker down),
// even if a `sleep` or `hang` call is still pending.
process.stdin.on('end', () => {
  log('stdin closed, exiting');
  process.exit(0);
});

await server.connect(new StdioServerTransport());
log('ready');
