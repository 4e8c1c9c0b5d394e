import { type Clock, type Logger, type ObjectStore, Periodic } from '@vision/shared';
import { evidencePrefix } from '../domain/evidence/plan';
import type { AnalyticsStore } from '../store/analytics-store';
import type { EvidenceStore } from '../store/evidence-store';
import type { FramesStore } from '../store/frames-store';
import type { TasksStore } from '../store/tasks-store';

export interface JanitorOptions {
  frames: FramesStore;
  tasks: TasksStore;
  /** A purged task's analytics (rules, snapshot, events) go with its frames. */
  analytics?: AnalyticsStore;
  /** A purged task's pictures (every object under its prefix) and their rows go with it too. */
  evidence?: { store: EvidenceStore; objects: ObjectStore };
  clock: Clock;
  logger: Logger;
  /** Most frames one DELETE removes, so a task with millions of frames never holds a long lock. */
  deleteBatch: number;
  /** Frames whose task never became known are deleted this long after they first arrived. */
  orphanRetentionMs: number;
  /** Tombstones of purged tasks are forgotten this long after the purge. */
  tombstoneRetentionMs: number;
  /** Pause between runs; 0 disables the timer (runOnce can still be called). */
  intervalMs: number;
  /**
   * Refreshes planner statistics after each pass. PGlite has no autovacuum: without statistics the
   * planner reads a page with a bitmap scan and sort of the task's remaining frames instead of an
   * ordered primary-key scan that stops after `limit` rows.
   */
  analyze?: () => Promise<void>;
}

export interface JanitorRun {
  tasksPurged: number;
  framesDeleted: number;
  tombstonesDeleted: number;
}

const TASKS_PER_QUERY = 100;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Retention: a task past result_expires_at loses its frames, deleted in bounded batches, and keeps a
 * tombstone (reads of it answer 404). Time comes from the injectable clock.
 */
export class Janitor {
  private loop?: Periodic;
  private running?: Promise<JanitorRun>;
  private stopped = false;

  constructor(private readonly opts: JanitorOptions) {}

  /** One full pass; concurrent calls share the pass in progress. */
  runOnce(): Promise<JanitorRun> {
    if (!this.running) this.running = this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async purgeTask(taskId: string, run: JanitorRun): Promise<void> {
    const { frames, tasks, deleteBatch } = this.opts;
    for (;;) {
      if (this.stopped) return;
      const n = await frames.deleteBatch(taskId, deleteBatch);
      run.framesDeleted += n;
      if (n < deleteBatch) break;
    }
    await this.deleteEvidence(taskId);
    await this.opts.analytics?.deleteTask(taskId);
    await tasks.markPurged(taskId, this.opts.clock.now());
    run.tasksPurged += 1;
  }

  /** A task's pictures: every object under its prefix (a step's pictures whose rows never came too), then rows. */
  private async deleteEvidence(taskId: string): Promise<void> {
    const ev = this.opts.evidence;
    if (!ev) return;
    const prefix = evidencePrefix(taskId);
    const after = new Date(this.opts.clock.now().getTime() + DAY_MS);
    for (;;) {
      const found = await ev.objects.listOlderThan(prefix, after, 1000);
      if (found.length > 0) await ev.objects.delete(found.map((o) => o.key));
      if (found.length < 1000 || this.stopped) break;
    }
    await ev.store.deleteTask(taskId);
  }

  private async pass(): Promise<JanitorRun> {
    const { tasks, clock } = this.opts;
    const run: JanitorRun = { tasksPurged: 0, framesDeleted: 0, tombstonesDeleted: 0 };
    const now = clock.now();
    for (;;) {
      const ids = await tasks.expired(now, TASKS_PER_QUERY);
      for (const id of ids) await this.purgeTask(id, run);
      if (ids.length < TASKS_PER_QUERY || this.stopped) break;
    }
    const orphanBefore = new Date(now.getTime() - this.opts.orphanRetentionMs);
    for (;;) {
      const ids = await tasks.orphansBefore(orphanBefore, TASKS_PER_QUERY);
      for (const id of ids) await this.purgeTask(id, run);
      if (ids.length < TASKS_PER_QUERY || this.stopped) break;
    }
    const tombstoneBefore = new Date(now.getTime() - this.opts.tombstoneRetentionMs);
    for (;;) {
      const n = await tasks.deleteTombstones(tombstoneBefore, 1000);
      run.tombstonesDeleted += n;
      if (n < 1000 || this.stopped) break;
    }
    await this.opts.analyze?.();
    if (run.tasksPurged > 0 || run.tombstonesDeleted > 0)
      this.opts.logger.info({ ...run }, 'results retention pass');
    return run;
  }

  start(): void {
    if (this.opts.intervalMs <= 0 || this.loop) return;
    this.loop = new Periodic(
      'results retention',
      this.opts.intervalMs,
      () => this.runOnce(),
      this.opts.logger,
    );
    this.loop.start(this.opts.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop?.stop();
    await this.running?.catch(() => undefined);
  }
}
