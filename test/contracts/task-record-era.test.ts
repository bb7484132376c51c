/**
 * Task records across a rolling upgrade: this release names the eras by their dates but writes
 * them as the previous release spells them ('legacy', 'modern'), which reads either spelling.
 */
import { describe, expect, it } from 'vitest';
import { readTaskRecord, writeTaskRecord, type TaskRecord } from '../../src/contracts/task-store.js';

const record = (era: TaskRecord['era']): TaskRecord => ({
  taskId: 't1',
  binding: 'b',
  era,
  status: 'working',
  createdAt: 1,
  lastUpdatedAt: 1,
  ttlMs: 1000,
  pollIntervalMs: 100,
  owner: 'replica-1',
  scope: 's',
  requestId: '1',
});

describe('task record eras as stored', () => {
  it("writes 2025-11-25 as 'legacy' and 2026-07-28 as 'modern', which the previous release reads", () => {
    expect(JSON.parse(writeTaskRecord(record('2025-11-25'))).era).toBe('legacy');
    expect(JSON.parse(writeTaskRecord(record('2026-07-28'))).era).toBe('modern');
  });

  it('reads back what it wrote, with the dates', () => {
    for (const era of ['2025-11-25', '2026-07-28'] as const) {
      expect(readTaskRecord(writeTaskRecord(record(era)))).toEqual(record(era));
    }
  });
});
