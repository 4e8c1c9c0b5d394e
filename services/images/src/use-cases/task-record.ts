import { type ImageResult, summarise } from '../domain/results';
import type { ImageTaskRecord } from '../clients/tasks-client';

/** The tasks service's record of an image call with these results (written again when they change). */
export function imageTaskRecord(
  call: { taskId: string; idempotencyKey: string; sceneCode: string },
  results: readonly ImageResult[],
): ImageTaskRecord {
  return {
    task_id: call.taskId,
    request_id: call.idempotencyKey,
    scene_code: call.sceneCode,
    status: 'succeeded',
    results_summary: summarise(results),
  };
}
