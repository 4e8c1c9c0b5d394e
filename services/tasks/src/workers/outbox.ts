/** The tasks outbox relay: the shared OutboxRelay (claims with SKIP LOCKED) over tasks' outbox table. */
import { type Bus, type Clock, type Knex, type Logger, OutboxRelay } from '@vision/shared';
import { TASKS_OUTBOX } from '../store/task-row';

export function tasksOutboxRelay(d: {
  knex: Knex;
  bus: Pick<Bus, 'publish'>;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  lingerMs?: number;
  batchSize?: number;
}) {
  return new OutboxRelay({ ...d, columns: TASKS_OUTBOX, name: 'tasks outbox relay' });
}
