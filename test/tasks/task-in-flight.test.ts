/**
 * A task's call counts against its client's in-flight share (limits.maxInFlightPerClient) until
 * it ends, as the same call made plainly would. One 2025-11-25 session floods task calls of a
 * 30 s tool at a shared pool with room for 8: 4 (its share) are taken, the rest get 429
 * CLIENT_TOO_MANY_IN_FLIGHT, and another session's call on that pool is answered at once, not
 * OVERLOADED. The session's tasks/cancel goes through at its limit; once its tasks are
 * cancelled nothing is held and its whole share serves again. Real stdio upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import { startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { legacySession, tasksConfig } from '../support/tasks.js';

const SHARE = 4;
let gw: RunningGateway;

beforeAll(async () => {
  const pool = { min: 1, max: 1, maxInFlight: 8, queueSize: 8, queueTimeoutMs: 2000 };
  gw = await startGateway(tasksConfig({ limits: { maxInFlightPerClient: SHARE } }, { mode: 'shared', pool }));
}, 30_000);

afterAll(async () => {
  await gw?.stop();
});

describe('tasks and the in-flight share', () => {
  it("a flood of task calls takes the session's share only; its cancels go through; nothing stays held", async () => {
    const flooder = await legacySession(gw);
    const replies = await Promise.all(
      Array.from({ length: 12 }, () =>
        flooder('tools/call', { name: 'slow_compute', arguments: { seconds: 30 }, task: {} }),
      ),
    );
    const tasks = replies.filter((r) => r.result?.task).map((r) => r.result.task.taskId as string);
    const refused = replies.filter((r) => r.error);
    expect(tasks).toHaveLength(SHARE);
    expect(refused).toHaveLength(12 - SHARE);
    for (const r of refused)
      expect(r.error).toMatchObject({ code: -32015, data: { type: 'CLIENT_TOO_MANY_IN_FLIGHT' } });

    // Another client on the same pool: served at once (before, it queued behind the flood until OVERLOADED).
    const other = await legacySession(gw);
    expect(toolText((await other('tools/call', { name: 'greet', arguments: { name: 'other' } })).result)).toBe(
      'Hello, other!',
    );

    // The flooder's share is its tasks': a plain call is refused, but its cancels go through.
    expect((await flooder('tools/call', { name: 'greet', arguments: { name: 'over' } })).error.data.type).toBe(
      'CLIENT_TOO_MANY_IN_FLIGHT',
    );
    for (const taskId of tasks)
      expect(await flooder('tasks/cancel', { taskId })).toMatchObject({ result: { status: 'cancelled' } });

    await untilNothingHeld(gw);
    expect(internals(gw.gateway.server).tasks).toMatchObject({ places: 0, waits: 0 });
    // Its whole share serves again: that many calls at once, none refused.
    const again = await Promise.all(
      Array.from({ length: SHARE }, (_, i) =>
        flooder('tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: `again ${i}` } }),
      ),
    );
    expect(again.map((r) => toolText(r.result))).toEqual(
      Array.from({ length: SHARE }, (_, i) => `again ${i}: computed for 1 s`),
    );
    await flooder.end();
    await other.end();
  });
});
