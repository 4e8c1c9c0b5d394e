/** The internal read of an image call's task record (docs/INTERNAL.md, images). */
import type { Express } from 'express';
import { ApiError, identityOf, route } from '@vision/shared';
import type { CallStore } from '../store/call-store';

export type CallRecords = Pick<CallStore, 'taskRecord'>;

/** Task ids as the tasks service accepts them (at most 64 characters). */
const TASK_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;

export function mountCallRoutes(app: Express, calls: CallRecords): void {
  // The tasks service asks here for a call it has not recorded yet (its record is still on the way):
  // the caller's own call whose results are stored, as `vision.image-calls` carries it; 404 otherwise.
  app.get(
    '/internal/v1/calls/:task_id',
    route(async (req, res) => {
      const { subject } = identityOf(res);
      const id = String(req.params.task_id);
      const record = TASK_ID_RE.test(id) ? await calls.taskRecord(subject, id) : undefined;
      if (!record) throw new ApiError('OP-NOT-FOUND', 'No such image call');
      res.json(record);
    }),
  );
}
