/**
 * `vision.task.frames_available`: for each running task whose owner has an endpoint subscribed to it, at
 * most one event per task per interval, carrying the results cursor the new frames start at, the cursor
 * after them, and counts (never frames). Replicas agree through a conditional upsert of the task's mark: the
 * one whose upsert wins writes the deliveries, in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import { Periodic, type Knex } from '@vision/shared';
import type { CursorCodec } from '../domain/cursor';
import { framesAvailable } from '../domain/webhooks/events';
import { fanOut, type FanoutDeps } from './webhook-fanout';

const TYPE = 'vision.task.frames_available';
const BATCH = 500;

interface Candidate {
  task_id: string;
  subject: string;
  announced: number | null;
  newest: number | null;
}

export interface AnnouncerDeps extends FanoutDeps {
  knex: Knex;
  cursors: CursorCodec;
  intervalMs: number;
}

export class FramesAnnouncer {
  private readonly loop: Periodic;

  constructor(private readonly d: AnnouncerDeps) {
    const tick = d.intervalMs <= 0 ? 0 : Math.max(50, Math.min(1_000, Math.floor(d.intervalMs / 2)));
    this.loop = new Periodic('webhook frames announcer', tick, () => this.announce(), d.logger);
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass: announces the tasks whose interval passed and that have frames not yet announced. */
  async announce(): Promise<number> {
    const { knex, clock } = this.d;
    const now = clock.now();
    const due = new Date(now.getTime() - this.d.intervalMs);
    const r = (await knex.raw(
      `SELECT t.task_id, t.subject, m.last_seq AS announced,
              (SELECT max(f.seq) FROM result_frames f WHERE f.task_id = t.task_id) AS newest
       FROM result_tasks t LEFT JOIN webhook_frame_marks m ON m.task_id = t.task_id
       WHERE t.status = 'running' AND t.kind = 'video' AND t.subject IS NOT NULL
         AND EXISTS (SELECT 1 FROM webhook_endpoints e
                     WHERE e.subject = t.subject AND e.enabled AND e.event_types @> ?::jsonb)
         AND (m.emitted_at IS NULL OR m.emitted_at <= ?)
       LIMIT ?`,
      [JSON.stringify([TYPE]), due, BATCH],
    )) as { rows: Candidate[] };
    let announced = 0;
    for (const c of r.rows) {
      const newest = c.newest === null ? -1 : Number(c.newest);
      const before = c.announced === null ? -1 : Number(c.announced);
      if (newest <= before) continue;
      if (await this.announceOne(c.task_id, c.subject, before, newest, now, due)) announced += 1;
    }
    return announced;
  }

  private async announceOne(
    taskId: string,
    subject: string,
    before: number,
    newest: number,
    now: Date,
    due: Date,
  ): Promise<boolean> {
    const { knex, cursors } = this.d;
    return knex.transaction(async (trx) => {
      const won = (await trx.raw(
        `INSERT INTO webhook_frame_marks AS m (task_id, last_seq, emitted_at) VALUES (?, ?, ?)
         ON CONFLICT (task_id) DO UPDATE SET last_seq = excluded.last_seq, emitted_at = excluded.emitted_at
         WHERE m.emitted_at <= ? AND m.last_seq = ?
         RETURNING task_id`,
        [taskId, newest, now, due, before],
      )) as { rows: unknown[] };
      if (won.rows.length === 0) return false;
      const event = framesAvailable({
        eventId: randomUUID(),
        subject,
        taskId,
        at: now,
        cursor: before < 0 ? '' : cursors.encode({ taskId, lastSeq: before }),
        nextCursor: cursors.encode({ taskId, lastSeq: newest }),
        newFrames: newest - before,
        framesStored: newest + 1,
      });
      await fanOut(this.d, [{ ...event, traceHeaders: null }], trx);
      return true;
    });
  }
}
