/**
 * The task record of an image call (docs/INTERNAL.md, `vision.image-calls`): what the tasks service keeps
 * of the call, published through the images outbox when the results are stored or rewritten, and answered
 * by GET /internal/v1/calls/{task_id} while tasks has not recorded it yet.
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_OUTBOX_TABLE, TOPICS, outboxRow } from '@vision/shared';
import { type ImageResult, type ResultsSummary, summarise } from '../domain/results';

export interface ImageTaskRecord {
  task_id: string;
  subject: string;
  /** The call's Idempotency-Key. */
  request_id: string;
  scene_code: string;
  status: 'succeeded';
  results_summary: ResultsSummary;
  /** When the results were first stored (the record's creation), ISO 8601. */
  created_at: string;
  /** When the results were last stored or rewritten, ISO 8601. */
  updated_at: string;
}

/** A `vision.image-calls` value: the record, with the event's schema, id and type. */
export interface ImageCallRecorded extends ImageTaskRecord {
  schema: 1;
  event_id: string;
  type: 'image_call.recorded';
}

/** Which call a record is for (the claim's subject, key and task id). */
export interface RecordRef {
  subject: string;
  key: string;
  taskId: string;
}

/** The record of a call with these results, stored at `createdAt` and last at `updatedAt`. */
export function imageTaskRecord(
  ref: RecordRef,
  sceneCode: string,
  results: readonly ImageResult[],
  createdAt: Date,
  updatedAt: Date,
): ImageTaskRecord {
  return {
    task_id: ref.taskId,
    subject: ref.subject,
    request_id: ref.key,
    scene_code: sceneCode,
    status: 'succeeded',
    results_summary: summarise(results),
    created_at: createdAt.toISOString(),
    updated_at: updatedAt.toISOString(),
  };
}

/** The outbox row that publishes `record` on `vision.image-calls`, keyed by task id. */
export function recordRow(record: ImageTaskRecord, at: Date): Record<string, string | Date> {
  const event: ImageCallRecorded = {
    schema: 1,
    event_id: randomUUID(),
    type: 'image_call.recorded',
    ...record,
  };
  return outboxRow(DEFAULT_OUTBOX_TABLE, TOPICS.imageCalls, record.task_id, event, at);
}
