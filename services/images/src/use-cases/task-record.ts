import { type ImageResult, summarise } from '../domain/results';
import type { ImageTaskRecord } from '../clients/tasks-client';
import type { CallRef } from './context';

/** The tasks service's record of an image call with these results (written again when they change). */
export function imageTaskRecord(call: CallRef, results: readonly ImageResult[]): ImageTaskRecord {
  return {
    task_id: call.taskId,
    request_id: call.ref.key,
    scene_code: call.sceneCode,
    status: 'succeeded',
    results_summary: summarise(results),
  };
}
