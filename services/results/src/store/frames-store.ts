import type { Knex } from '@vision/shared';
import type { FrameZones, StoredFrame, StoredObject } from '../domain/frames';
import { snapshotAsOfSeq } from './analytics-store';

/** Rows per INSERT statement: 7 parameters a row stays well under Postgres' 65535 bind parameters. */
export const INSERT_CHUNK = 4000;

interface FrameRow {
  task_id: string;
  seq: number;
  frame_id: string;
  frame_time_ms: string | number;
  width: number;
  height: number;
  objects: StoredObject[] | string;
  zones?: FrameZones | string | null;
}

export function toRow(f: StoredFrame): Record<string, unknown> {
  return {
    task_id: f.taskId,
    seq: f.seq,
    frame_id: f.frameId,
    frame_time_ms: f.frameTimeMs,
    width: f.width,
    height: f.height,
    // Serialised here: the pg driver would otherwise send a JS array as a Postgres array.
    objects: JSON.stringify(f.objects),
  };
}

function fromRow(r: FrameRow): StoredFrame {
  const frame: StoredFrame = {
    taskId: r.task_id,
    seq: Number(r.seq),
    frameId: r.frame_id,
    // bigint comes back as a string from pg; Unix milliseconds are far inside the safe integer range.
    frameTimeMs: Number(r.frame_time_ms),
    width: r.width,
    height: r.height,
    objects: typeof r.objects === 'string' ? (JSON.parse(r.objects) as StoredObject[]) : r.objects,
  };
  if (r.zones !== null && r.zones !== undefined)
    frame.zones = typeof r.zones === 'string' ? (JSON.parse(r.zones) as FrameZones) : r.zones;
  return frame;
}

export class FramesStore {
  constructor(private readonly knex: Knex) {}

  /**
   * Stores frames with one multi-row INSERT (per INSERT_CHUNK rows). A frame already stored (same
   * task_id and seq: a redelivery) is left as it is.
   */
  async insert(frames: StoredFrame[]): Promise<void> {
    for (let i = 0; i < frames.length; i += INSERT_CHUNK) {
      const rows = frames.slice(i, i + INSERT_CHUNK).map(toRow);
      await this.knex('result_frames').insert(rows).onConflict(['task_id', 'seq']).ignore();
    }
  }

  /**
   * Frames after `afterSeq`, in seq order, at most `limit`: a range scan of the primary key.
   */
  async page(taskId: string, afterSeq: number, limit: number): Promise<StoredFrame[]> {
    const rows = (await this.knex('result_frames')
      .select('task_id', 'seq', 'frame_id', 'frame_time_ms', 'width', 'height', 'objects', 'zones')
      .where('task_id', taskId)
      .andWhere('seq', '>', afterSeq)
      .orderBy('seq', 'asc')
      .limit(limit)) as FrameRow[];
    return rows.map(fromRow);
  }

  /**
   * What a read of results may show (page, with `limit` one more than the page): the frames after `afterSeq`, in
   * seq order, and how far the task's zones and lines are evaluated: `asOfSeq` undefined for a task without rules,
   * else the seq of the last frame its evaluation has seen (-1 before any). One statement: the evaluation's
   * progress is two probes of analytics_tasks' primary key in it, found nothing for a task without rules; only
   * a row last written by a writer that did not keep `as_of_seq` (a release before it) is read from its snapshot.
   */
  async readable(
    taskId: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ frames: StoredFrame[]; asOfSeq?: number }> {
    const rows = (await this.knex('result_frames')
      .select(
        'task_id',
        'seq',
        'frame_id',
        'frame_time_ms',
        'width',
        'height',
        'objects',
        'zones',
        this.knex.raw('EXISTS (SELECT 1 FROM analytics_tasks WHERE task_id = ?) AS has_rules', [taskId]),
        this.knex.raw(
          '(SELECT as_of_seq FROM analytics_tasks WHERE task_id = ? AND as_of_rev = rev) AS as_of_seq',
          [taskId],
        ),
      )
      .where('task_id', taskId)
      .andWhere('seq', '>', afterSeq)
      .orderBy('seq', 'asc')
      .limit(limit)) as (FrameRow & { has_rules: boolean; as_of_seq: number | null })[];
    if (rows.length === 0 || !rows[0].has_rules) return { frames: rows.map(fromRow) };
    if (rows[0].as_of_seq !== null) return { frames: rows.map(fromRow), asOfSeq: Number(rows[0].as_of_seq) };
    // The progress first, then the frames: every frame up to it is read with the annotations its step wrote.
    const asOfSeq = await snapshotAsOfSeq(this.knex, taskId);
    const frames = await this.page(taskId, afterSeq, limit);
    return asOfSeq === undefined ? { frames } : { frames, asOfSeq };
  }

  /** Deletes at most `batch` frames of a task (lowest seqs first); returns how many went. */
  async deleteBatch(taskId: string, batch: number): Promise<number> {
    const r = (await this.knex.raw(
      `DELETE FROM result_frames WHERE task_id = ? AND seq IN (
         SELECT seq FROM result_frames WHERE task_id = ? ORDER BY seq LIMIT ?)`,
      [taskId, taskId, batch],
    )) as { rowCount?: number; affectedRows?: number };
    return r.rowCount ?? r.affectedRows ?? 0;
  }

  /** The seq of the task's last stored frame; -1 when it has none. */
  async lastSeq(taskId: string): Promise<number> {
    const row = (await this.knex('result_frames').where('task_id', taskId).max({ s: 'seq' }).first()) as
      { s: string | number | null } | undefined;
    return row?.s === null || row?.s === undefined ? -1 : Number(row.s);
  }

  async count(taskId: string): Promise<number> {
    const row = (await this.knex('result_frames').where('task_id', taskId).count({ n: '*' }).first()) as
      { n: string | number } | undefined;
    return Number(row?.n ?? 0);
  }
}
