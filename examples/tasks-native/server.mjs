// @ts-check
// A stdio MCP server that runs tasks itself (2025-11-25 experimental tasks, the SDK v1
// experimental API: McpServer with a taskStore, `registerToolTask`). The gateway passes its tasks
// through: it keeps the tools' `execution.taskSupport`, forwards task-augmented calls, and wraps
// the task ids it returns so that tasks/get, tasks/result and tasks/cancel come back here.
//
// stdout is the JSON-RPC channel: never print anything else to it. Diagnostics go to stderr.
//
// Tools:
//   native_slow {seconds}   a task (taskSupport optional): works `seconds`, then completes with
//                           "slept {seconds} s"; stops when its task is cancelled (tasks/cancel)
//   native_required {}      a task (taskSupport required): completes at once with "done"
//   hello {name}            an ordinary tool: "Hello, {name}!"
//   pid {}                  this process's pid

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { z } from 'zod';

const taskStore = new InMemoryTaskStore();
const server = new McpServer(
  { name: 'tasks-native-fixture', version: '1.0.0' },
  {
    capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore,
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

server.experimental.tasks.registerToolTask(
  'native_slow',
  {
    description: 'Works for `seconds` as a task of its own',
    inputSchema: { seconds: z.number().min(0).max(600) },
    execution: { taskSupport: 'optional' },
  },
  {
    async createTask({ seconds }, { taskStore: store, taskRequestedTtl }) {
      const task = await store.createTask({ ttl: taskRequestedTtl ?? 60_000, pollInterval: 100 });
      void (async () => {
        const until = Date.now() + seconds * 1000;
        // Cooperative cancel: tasks/cancel marks the task cancelled in the store; the work sees it and stops.
        while (Date.now() < until) {
          await sleep(50);
          const now = await store.getTask(task.taskId).catch(() => undefined);
          if (!now || now.status === 'cancelled') return;
        }
        await store
          .storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `slept ${seconds} s` }] })
          .catch(() => undefined);
      })();
      return { task };
    },
    getTask: (_args, { taskId, taskStore: store }) => store.getTask(taskId),
    getTaskResult: async (_args, { taskId, taskStore: store }) =>
      /** @type {any} */ (await store.getTaskResult(taskId)),
  },
);

server.experimental.tasks.registerToolTask(
  'native_required',
  { description: 'A task only', execution: { taskSupport: 'required' } },
  {
    async createTask({ taskStore: store, taskRequestedTtl }) {
      const task = await store.createTask({ ttl: taskRequestedTtl ?? 60_000, pollInterval: 100 });
      void store
        .storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: 'done' }] })
        .catch(() => undefined);
      return { task };
    },
    getTask: (_args, { taskId, taskStore: store }) => store.getTask(taskId),
    getTaskResult: async (_args, { taskId, taskStore: store }) =>
      /** @type {any} */ (await store.getTaskResult(taskId)),
  },
);

server.registerTool('hello', { description: 'Greets', inputSchema: { name: z.string() } }, async ({ name }) => ({
  content: [{ type: 'text', text: `Hello, ${name}!` }],
}));
server.registerTool('pid', { description: "This process's pid" }, async () => ({
  content: [{ type: 'text', text: String(process.pid) }],
}));

await server.connect(new StdioServerTransport());
process.stderr.write(`[tasks-native-fixture ${process.pid}] ready\n`);
