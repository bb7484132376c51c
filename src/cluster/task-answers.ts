/**
 * A 2025 task is input_required while its call waits for its client's answer, and the replica
 * running the call is the one that knows which request is the task's. The answer may reach any
 * replica (no affinity): one that does not know the request says so on TASK_ANSWERS_CHANNEL,
 * and the replica running the task marks it working again. A lost message leaves the task
 * input_required until its call ends.
 */
import type { Logger } from '../observability/logger.js';
import type { Bus } from './bus.js';
import { TASK_ANSWERS_CHANNEL, decodeTaskAnswer, encodeTaskAnswer, type TaskAnswer } from './bus-messages.js';

/** Fire and forget, as a cancellation. */
export function publishTaskAnswer(bus: Bus, scope: string, id: string): void {
  bus.publish(TASK_ANSWERS_CHANNEL, encodeTaskAnswer({ replica: bus.replicaId, scope, id })).catch(() => undefined);
}

/** Resolves once this replica hears the other replicas' answers (not its own); the returned function stops it. */
export function subscribeTaskAnswers(
  bus: Bus,
  log: Logger,
  onAnswer: (answer: TaskAnswer) => void,
): Promise<() => Promise<void>> {
  return bus.subscribe(TASK_ANSWERS_CHANNEL, (raw) => {
    const answer = decodeTaskAnswer(raw);
    if (!answer) return log.warn('unreadable task answer on the bus');
    if (answer.replica !== bus.replicaId) onAnswer(answer);
  });
}
