import { isSnapshotReason, type Knex, type SnapshotReason } from '@vision/shared';
import { isBestShotRule, type BestShotRule } from '../domain/evidence/best-shot';

/** An event's picture as stored: `reason` null when its objects are in the store, else why there are none. */
export interface SnapshotRow {
  eventId: string;
  seq: number;
  frameTimeMs: number | null;
  reason: SnapshotReason | null;
}

/**
 * A track's best shot: the frame its objects show, that frame's detection score and the rule its box met; `reason`
 * null when its objects are stored, else why its picture could not be taken (a later step tries again).
 */
export interface BestShotRow {
  trackId: string;
  seq: number;
  frameTimeMs: number;
  score: number;
  rule: BestShotRule;
  reason: SnapshotReason | null;
}

const CHUNK = 1000;

interface SnapshotDbRow {
  event_id: string;
  seq: number;
  frame_time_ms: string | number | null;
  reason: string | null;
}

const snapshotOf = (r: SnapshotDbRow): SnapshotRow => ({
  eventId: r.event_id,
  seq: Number(r.seq),
  frameTimeMs: r.frame_time_ms === null ? null : Number(r.frame_time_ms),
  // A reason this release does not know reads as the nearest it does: no picture was taken.
  reason: r.reason === null ? null : isSnapshotReason(r.reason) ? r.reason : 'not_captured',
});

interface BestDbRow {
  track_id: string;
  seq: number;
  frame_time_ms: string | number;
  score: number;
  rule: string;
  reason: string | null;
}

const bestOf = (r: BestDbRow): BestShotRow => ({
  trackId: r.track_id,
  seq: Number(r.seq),
  frameTimeMs: Number(r.frame_time_ms),
  score: Number(r.score),
  // A rule this release does not know reads as the lowest it does.
  rule: isBestShotRule(r.rule) ? r.rule : 'at_edge',
  reason: r.reason === null ? null : isSnapshotReason(r.reason) ? r.reason : 'capture_failed',
});

/** A rule's rank in SQL (best-shot.ts: met over too_small over at_edge). */
const rank = (col: string) => `(CASE ${col} WHEN 'met' THEN 2 WHEN 'too_small' THEN 1 ELSE 0 END)`;

/**
 * A stored picture replaces a row without one, one of a lower rule, or one of the same rule and a lower score; a
 * failed picture only replaces a row without one: a row with a picture never loses it.
 */
const UPSERT_BEST = `INSERT INTO analytics_best_shots (task_id, track_id, seq, frame_time_ms, score, rule, reason)
  VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (task_id, track_id) DO UPDATE SET seq = excluded.seq, frame_time_ms = excluded.frame_time_ms,
    score = excluded.score, rule = excluded.rule, reason = excluded.reason
  WHERE analytics_best_shots.reason IS NOT NULL OR (excluded.reason IS NULL AND (
    ${rank('excluded.rule')} > ${rank('analytics_best_shots.rule')} OR (
    ${rank('excluded.rule')} = ${rank('analytics_best_shots.rule')} AND analytics_best_shots.score < excluded.score)))`;

/** The rows of analytics_snapshots and analytics_best_shots (evidence-migration.ts). */
export class EvidenceStore {
  constructor(private readonly knex: Knex) {}

  /** The pictures of these events of a task, by event id (an event without a row has none). */
  async snapshots(taskId: string, eventIds: readonly string[]): Promise<Map<string, SnapshotRow>> {
    const out = new Map<string, SnapshotRow>();
    for (let i = 0; i < eventIds.length; i += CHUNK) {
      const rows = (await this.knex('analytics_snapshots')
        .where('task_id', taskId)
        .whereIn('event_id', eventIds.slice(i, i + CHUNK))
        .select('event_id', 'seq', 'frame_time_ms', 'reason')) as SnapshotDbRow[];
      for (const r of rows) out.set(r.event_id, snapshotOf(r));
    }
    return out;
  }

  /** The best shots of these tracks of a task, by track id. */
  async bestShots(taskId: string, trackIds: readonly string[]): Promise<Map<string, BestShotRow>> {
    const out = new Map<string, BestShotRow>();
    for (let i = 0; i < trackIds.length; i += CHUNK) {
      const rows = (await this.knex('analytics_best_shots')
        .where('task_id', taskId)
        .whereIn('track_id', trackIds.slice(i, i + CHUNK))
        .select('track_id', 'seq', 'frame_time_ms', 'score', 'rule', 'reason')) as BestDbRow[];
      for (const r of rows) out.set(r.track_id, bestOf(r));
    }
    return out;
  }

  /** Whether the task has an event of this id (stored by its evaluation). */
  async hasEvent(taskId: string, eventId: string): Promise<boolean> {
    const r = (await this.knex('analytics_events')
      .where({ task_id: taskId, event_id: eventId })
      .first('n')) as { n: unknown } | undefined;
    return r !== undefined;
  }

  /** A track's best shot (or why its picture is missing), if one was kept. */
  async bestShot(taskId: string, trackId: string): Promise<BestShotRow | undefined> {
    return (await this.bestShots(taskId, [trackId])).get(trackId);
  }

  /**
   * Writes a step's rows in its transaction: an event's row once (a step run again after a crash finds the same
   * objects and writes the same row); a track's best shot as UPSERT_BEST says.
   */
  async write(trx: Knex, taskId: string, snaps: SnapshotRow[], bests: BestShotRow[]): Promise<void> {
    for (let i = 0; i < snaps.length; i += CHUNK) {
      const rows = snaps.slice(i, i + CHUNK).map((s) => ({
        task_id: taskId,
        event_id: s.eventId,
        seq: s.seq,
        frame_time_ms: s.frameTimeMs,
        reason: s.reason,
      }));
      await trx('analytics_snapshots').insert(rows).onConflict(['task_id', 'event_id']).ignore();
    }
    for (const b of bests)
      await trx.raw(UPSERT_BEST, [taskId, b.trackId, b.seq, b.frameTimeMs, b.score, b.rule, b.reason]);
  }

  /** Forgets a task's evidence rows (retention; its objects go with the task's prefix). */
  async deleteTask(taskId: string): Promise<void> {
    await this.knex('analytics_snapshots').where({ task_id: taskId }).delete();
    await this.knex('analytics_best_shots').where({ task_id: taskId }).delete();
  }
}
