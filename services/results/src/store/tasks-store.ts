import type { Knex } from '@vision/shared';
import { TERMINAL_STATUSES, type EndMarker, type TaskMeta } from '../domain/task-meta';

/** Everything results keeps about one task. */
export interface TaskRecord {
  taskId: string;
  /** Undefined until a task event or a fetch from tasks told us (frames may arrive first). */
  meta?: TaskMeta;
  end?: EndMarker;
  purgedAt?: Date;
}

interface TaskRow {
  task_id: string;
  subject: string | null;
  kind: string | null;
  status: string | null;
  business_threshold: number | string | null;
  lower_bound: number | string | null;
  result_expires_at: Date | string | null;
  status_at: Date | string | null;
  end_frames: number | null;
  end_status: string | null;
  purged_at: Date | string | null;
}

const date = (v: Date | string | null): Date | undefined => (v === null ? undefined : new Date(v));

function fromRow(r: TaskRow): TaskRecord {
  const rec: TaskRecord = { taskId: r.task_id };
  if (
    r.subject !== null &&
    (r.kind === 'video' || r.kind === 'image') &&
    r.status !== null &&
    r.business_threshold !== null &&
    r.lower_bound !== null &&
    r.result_expires_at !== null
  ) {
    rec.meta = {
      taskId: r.task_id,
      subject: r.subject,
      kind: r.kind,
      status: r.status,
      businessThreshold: Number(r.business_threshold),
      lowerBound: Number(r.lower_bound),
      resultExpiresAt: new Date(r.result_expires_at),
      statusAt: date(r.status_at),
    };
  }
  if (r.end_frames !== null) rec.end = { frames: Number(r.end_frames), status: r.end_status ?? 'unknown' };
  const purged = date(r.purged_at);
  if (purged) rec.purgedAt = purged;
  return rec;
}

export interface MetaUpdate extends TaskMeta {
  sceneCode?: string;
  statusAt: Date;
  /** `event` (vision.task-events) or `fetch` (GET /internal/v1/tasks/{id}). */
  source: 'event' | 'fetch';
}

// A constant list, inlined so the statement is the same for pg and PGlite.
const TERMINAL_SQL = [...TERMINAL_STATUSES].map((s) => `'${s}'`).join(', ');
const NEW_TERMINAL = `(excluded.status IN (${TERMINAL_SQL}))`;
const OLD_TERMINAL = `(t.status IN (${TERMINAL_SQL}))`;
/**
 * Whether an update's status replaces the stored one: a terminal status is never replaced by a
 * non-terminal one (events can arrive after a fetch saw a later state); otherwise the later wins.
 */
const TAKE_NEW_STATUS = `(t.status IS NULL
  OR (${NEW_TERMINAL} AND NOT ${OLD_TERMINAL})
  OR (${NEW_TERMINAL} = ${OLD_TERMINAL} AND (t.status_at IS NULL OR excluded.status_at >= t.status_at)))`;

export class TasksStore {
  constructor(private readonly knex: Knex) {}

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const row = (await this.knex('result_tasks').where('task_id', taskId).first()) as TaskRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Records ownership, thresholds, retention and status from a task event or a fetch. */
  async upsertMeta(u: MetaUpdate, now: Date): Promise<void> {
    await this.knex.raw(
      `INSERT INTO result_tasks AS t (task_id, subject, kind, scene_code, status, business_threshold, lower_bound,
          result_expires_at, status_at, meta_source, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (task_id) DO UPDATE SET
         subject = excluded.subject,
         kind = excluded.kind,
         scene_code = COALESCE(excluded.scene_code, t.scene_code),
         business_threshold = excluded.business_threshold,
         lower_bound = excluded.lower_bound,
         result_expires_at = excluded.result_expires_at,
         status = CASE WHEN ${TAKE_NEW_STATUS} THEN excluded.status ELSE t.status END,
         status_at = CASE WHEN ${TAKE_NEW_STATUS} THEN excluded.status_at ELSE t.status_at END,
         meta_source = CASE WHEN t.meta_source = 'event' THEN 'event' ELSE excluded.meta_source END,
         updated_at = excluded.updated_at`,
      [
        u.taskId,
        u.subject,
        u.kind,
        u.sceneCode ?? null,
        u.status,
        u.businessThreshold,
        u.lowerBound,
        u.resultExpiresAt,
        u.statusAt,
        u.source,
        now,
      ],
    );
  }

  /**
   * Notes that frames of these tasks arrived (first arrival time, for the retention of frames whose
   * task never got known). Frames arriving after a purge re-open it so the janitor deletes them again.
   * Answers those of the tasks that have zones or lines.
   */
  async noteFrames(taskIds: string[], now: Date): Promise<string[]> {
    if (taskIds.length === 0) return [];
    const values = taskIds.map(() => '(?, ?)').join(', ');
    const bindings = taskIds.flatMap((id) => [id, now]);
    // In the same statement, which of these tasks have zones or lines (docs/ANALYTICS.md): their frames are
    // evaluated next, at no extra round trip for the tasks without.
    const r = (await this.knex.raw(
      `WITH noted AS (
         INSERT INTO result_tasks AS t (task_id, first_frame_at) VALUES ${values}
         ON CONFLICT (task_id) DO UPDATE SET purged_at = NULL WHERE t.purged_at IS NOT NULL)
       SELECT task_id FROM analytics_tasks WHERE task_id IN (${taskIds.map(() => '?').join(', ')})`,
      [...bindings, ...taskIds],
    )) as { rows: { task_id: string }[] };
    return r.rows.map((row) => row.task_id);
  }

  /** Stores the end marker (total frame count) of a task. */
  async markEnded(taskId: string, end: EndMarker, now: Date): Promise<void> {
    await this.knex.raw(
      `INSERT INTO result_tasks AS t (task_id, end_frames, end_status, first_frame_at, updated_at)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (task_id) DO UPDATE SET end_frames = excluded.end_frames, end_status = excluded.end_status,
         updated_at = excluded.updated_at`,
      [taskId, end.frames, end.status, now, now],
    );
  }

  /** Tasks whose results expired and were not purged yet, oldest first. */
  async expired(now: Date, limit: number): Promise<string[]> {
    const rows = (await this.knex('result_tasks')
      .select('task_id')
      .whereNull('purged_at')
      .whereNotNull('result_expires_at')
      .andWhere('result_expires_at', '<=', now)
      .orderBy('result_expires_at', 'asc')
      .limit(limit)) as { task_id: string }[];
    return rows.map((r) => r.task_id);
  }

  /** Tasks that only ever got frames (no event, never read) and whose first frame is older than `before`. */
  async orphansBefore(before: Date, limit: number): Promise<string[]> {
    const rows = (await this.knex('result_tasks')
      .select('task_id')
      .whereNull('subject')
      .whereNull('purged_at')
      .andWhere('first_frame_at', '<=', before)
      .orderBy('first_frame_at', 'asc')
      .limit(limit)) as { task_id: string }[];
    return rows.map((r) => r.task_id);
  }

  async markPurged(taskId: string, now: Date): Promise<void> {
    await this.knex('result_tasks').where('task_id', taskId).update({ purged_at: now, updated_at: now });
  }

  /** Forgets tombstones purged before `before`; returns how many went. */
  async deleteTombstones(before: Date, limit: number): Promise<number> {
    const r = (await this.knex.raw(
      `DELETE FROM result_tasks WHERE task_id IN (
         SELECT task_id FROM result_tasks WHERE purged_at IS NOT NULL AND purged_at <= ? LIMIT ?)`,
      [before, limit],
    )) as { rowCount?: number; affectedRows?: number };
    return r.rowCount ?? r.affectedRows ?? 0;
  }
}
