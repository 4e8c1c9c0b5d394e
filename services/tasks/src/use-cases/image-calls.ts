/**
 * Image calls in the tasks service: their records arrive from the images service on `vision.image-calls`
 * and are stored as tasks of kind `image`; a read of a task id not stored yet asks images, the owner of
 * the record, so that a call is found right after its 201 while its record is on the way.
 */
import type { Clock, Identity, Logger, SceneStatus } from '@vision/shared';
import { type ImageCallRecord } from '../domain/image-call';
import { resultExpiresAt } from '../domain/retention';
import type { ImagesClient } from '../clients/images-client';
import type { Signals } from '../ports';
import type { TaskRow } from '../store/task-row';
import type { TaskStore } from '../store/task-store';

export interface ImageCallsDeps {
  store: Pick<TaskStore, 'insertImageTask'>;
  images: Pick<ImagesClient, 'callRecord'>;
  /** Every scene inference reports (their lower bounds). */
  scenes: { list(): Promise<SceneStatus[]> };
  signals: Pick<Signals, 'eventsWritten'>;
  clock: Clock;
  logger: Logger;
  settings: { businessThreshold: number; retentionDays: number };
}

/** What `record` did with a record. */
export type RecordOutcome = 'created' | 'updated' | 'refused';

export class ImageCalls {
  constructor(private readonly d: ImageCallsDeps) {}

  /** The scene's lower bound; undefined for a scene inference does not report. Throws while the list cannot be had. */
  private async lowerBound(sceneCode: string): Promise<number | undefined> {
    return (await this.d.scenes.list()).find((s) => s.scene_code === sceneCode)?.lower_bound;
  }

  /**
   * Stores a record (idempotent; a later record of the same call replaces the summary). Refused, and
   * logged, for a scene inference does not know or a task id another subject holds. Throws when the
   * scene list or the database cannot be had (the message is delivered again).
   */
  async record(r: ImageCallRecord): Promise<RecordOutcome> {
    const lowerBound = await this.lowerBound(r.scene_code);
    if (lowerBound === undefined) {
      this.d.logger.error(
        { task_id: r.task_id, scene_code: r.scene_code },
        'image call record of an unknown scene',
      );
      return 'refused';
    }
    const out = await this.d.store.insertImageTask({
      task_id: r.task_id,
      subject: r.subject,
      request_id: r.request_id,
      scene_code: r.scene_code,
      status: r.status,
      business_threshold: this.d.settings.businessThreshold,
      lower_bound: lowerBound,
      results_summary: r.results_summary,
      retention_days: this.d.settings.retentionDays,
      created_at: new Date(r.created_at),
      updated_at: new Date(r.updated_at),
    });
    if (out.created) this.d.signals.eventsWritten();
    if (!out.created && out.task.subject !== r.subject) {
      this.d.logger.error({ task_id: r.task_id }, 'image call record of a task id another subject holds');
      return 'refused';
    }
    return out.created ? 'created' : 'updated';
  }

  /**
   * The task a stored record of the caller's image call `taskId` will be, read from images (the owner of
   * the record) while it is on the way; undefined when images has no such call for the caller, or one
   * whose results have expired.
   */
  async lookup(identity: Identity, taskId: string): Promise<TaskRow | undefined> {
    const r = await this.d.images.callRecord(identity, taskId);
    if (!r) return undefined;
    const lowerBound = await this.lowerBound(r.scene_code).catch(() => undefined);
    if (lowerBound === undefined) return undefined;
    const task = imageTaskRow(r, { ...this.d.settings, lowerBound });
    return task.result_expires_at > this.d.clock.now() ? task : undefined;
  }
}

/** The task row an image call's record is stored as (TaskStore.insertImageTask writes the same fields). */
export function imageTaskRow(
  r: ImageCallRecord,
  terms: { businessThreshold: number; lowerBound: number; retentionDays: number },
): TaskRow {
  const createdAt = new Date(r.created_at);
  return {
    task_id: r.task_id,
    subject: r.subject,
    kind: 'image',
    source_type: null,
    request_id: r.request_id,
    scene_code: r.scene_code,
    status: r.status,
    reason: null,
    business_threshold: terms.businessThreshold,
    lower_bound: terms.lowerBound,
    stream_url: null,
    stream_url_redacted: null,
    object_key: null,
    object_sha256: null,
    object_size: null,
    results_summary: r.results_summary,
    stop_requested: false,
    abandoned: false,
    announced: true,
    refund_pending: false,
    created_at: createdAt,
    updated_at: new Date(r.updated_at),
    result_expires_at: resultExpiresAt(createdAt, terms.retentionDays),
    expired_at: null,
    queued_at: null,
    job_restarts: 0,
    job_restarted_at: null,
    rules_digest: null,
    rules_version: 0,
  };
}
