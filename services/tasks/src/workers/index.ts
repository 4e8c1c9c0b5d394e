/**
 * The background loops of the tasks service, each the shared Periodic helper over one worker module:
 * job poller, queue dispatcher, stop driver, reconciler (resolving tasks, refunds to retry, late jobs), crash recovery,
 * retention, and the outbox relay.
 */
import { type Bus, type Knex, type OutboxRelay, Periodic } from '@vision/shared';
import type { TaskContext } from '../ports';
import { recoverSubmitting } from './crash-recovery';
import { runQueue } from './dispatcher';
import { pollJobs } from './job-poller';
import { tasksOutboxRelay } from './outbox';
import { reconcileResolving, retryRefunds, stopLateJobs } from './reconciler';
import { expireTasks } from './retention';
import { driveStops } from './stop-driver';

export class TaskWorkers {
  readonly poller: Periodic;
  readonly dispatcher: Periodic;
  readonly stopDriver: Periodic;
  readonly reconciler: Periodic;
  readonly recovery: Periodic;
  readonly retention: Periodic;
  readonly outbox: OutboxRelay;

  constructor(
    private readonly ctx: TaskContext,
    db: { knex: Knex; bus: Bus },
  ) {
    const { settings: s, logger } = ctx;
    this.poller = new Periodic('job poller', s.pollIntervalMs, () => pollJobs(ctx), logger);
    this.dispatcher = new Periodic('queue dispatcher', s.pollIntervalMs, () => runQueue(ctx), logger);
    this.stopDriver = new Periodic('stop driver', s.pollIntervalMs, () => driveStops(ctx), logger);
    this.reconciler = new Periodic(
      'reconciler',
      s.reconcileIntervalMs,
      async () => {
        await reconcileResolving(ctx);
        await retryRefunds(ctx);
        await stopLateJobs(ctx);
      },
      logger,
    );
    this.recovery = new Periodic(
      'crash recovery',
      s.reconcileIntervalMs,
      () => recoverSubmitting(ctx),
      logger,
    );
    this.retention = new Periodic('retention', s.janitorIntervalMs, () => expireTasks(ctx), logger);
    this.outbox = tasksOutboxRelay({
      knex: db.knex,
      bus: db.bus,
      clock: ctx.clock,
      logger,
      intervalMs: s.outboxIntervalMs ?? 500,
      lingerMs: s.outboxLingerMs,
    });
  }

  private get loops(): Periodic[] {
    return [this.poller, this.dispatcher, this.stopDriver, this.reconciler, this.recovery, this.retention];
  }

  start(): void {
    for (const loop of this.loops) loop.start();
    this.outbox.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.loops.map((l) => l.stop()));
    await this.outbox.stop();
  }

  /** One pass of each worker, for operators and tests. */
  recoverSubmitting = (): Promise<void> => recoverSubmitting(this.ctx);
  runQueue = (): Promise<void> => runQueue(this.ctx);
  reconcileResolving = (): Promise<void> => reconcileResolving(this.ctx);
  expireTasks = (): Promise<number> => expireTasks(this.ctx);
}
