/** The tasks outbox relay: the shared OutboxRelay (claims with SKIP LOCKED) over tasks' outbox table. */
import { type Bus, type Clock, type Knex, type Logger, OutboxRelay } from '@vision/shared';

export const TASKS_OUTBOX = {
  table: 'outbox',
  key: 'msg_key',
  payload: 'value',
  sentAt: 'published_at',
  claimedUntil: 'claimed_until',
  headers: 'headers',
};

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
