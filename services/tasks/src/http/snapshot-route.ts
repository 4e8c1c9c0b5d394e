/**
 * `GET /v1/vision/tasks/{task_id}/snapshot` (docs/API.md, "Zones, lines and their events"): the latest picture the
 * decoder took of a running video task, as JPEG, for drawing zones and lines on the real scene (a live stream
 * has no stored video). Another subject's task and an image call answer 404; the caller's task that is not
 * running, or whose decoder has delivered no frame yet, 409 OP-TASK-NO-PICTURE (the task exists, its picture does
 * not, for now or any more). Only pixels leave: the stream's address (and its credentials) never does.
 */
import type { Express } from 'express';
import { ApiError, identityOf, refuseUnknownQuery, route } from '@vision/shared';
import type { HttpDeps } from './deps';
import { ownTask } from './own-task';

export const SNAPSHOT_PATH = '/v1/vision/tasks/:task_id/snapshot';

const none = (why: string) => new ApiError('OP-TASK-NO-PICTURE', `No picture of this task: ${why}`);

export function mountSnapshotRoute(app: Express, d: HttpDeps): void {
  app.get(
    SNAPSHOT_PATH,
    route(async (req, res) => {
      refuseUnknownQuery(req.query as Record<string, unknown>);
      const task = await ownTask(d.ctx.store, req, res);
      if (task.kind !== 'video')
        throw new ApiError('OP-NOT-FOUND', 'No such task: it is an image call record');
      if (task.status !== 'running') throw none('it is not running');
      let still;
      try {
        still = await d.ctx.inference.still(identityOf(res), task.task_id);
      } catch {
        throw new ApiError('OP-SYS-UNAVAILABLE', 'The inference backend did not answer, retry later');
      }
      if (!still) throw none('no frame has been decoded yet');
      res
        .status(200)
        .set({
          'content-type': 'image/jpeg',
          'cache-control': 'no-store',
          'x-frame-time-ms': String(still.frame_time_ms),
        })
        .end(still.jpeg);
    }),
  );
}
