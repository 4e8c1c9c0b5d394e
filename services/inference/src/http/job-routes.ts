import type { Express, Request, Response } from 'express';
import { z } from 'zod';
import { invalidRequest, notFound, route } from '@vision/shared';
import { jobRequestSchema, type JobManager } from '../jobs/job-manager';
import { forwardToOwner, wasForwarded } from '../ownership/forward';
import type { OwnedJobs } from '../ownership/owned-jobs';

const STATUS = { accepted: 201, duplicate: 200, rejected: 422, over_capacity: 429 } as const;
const ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const unit = z.number().min(0).max(1);
const pictureRequestSchema = z
  .object({
    seq: z.number().int().min(0),
    box: z.tuple([unit, unit, unit, unit]).optional(),
    polygon: z
      .array(z.tuple([unit, unit]))
      .min(3)
      .max(32)
      .optional(),
  })
  .strict();

/**
 * The jobs API. With `owned` (job-running replicas sharing a lease store: ownership/), submissions are placed on
 * the replica with room, queries read the store, and a call only the job's owner answers is forwarded to it.
 */
export function mountJobRoutes(app: Express, jobs: JobManager, owned?: OwnedJobs): void {
  /** True when the call was answered by the job's owner elsewhere (or it is unknown there too). */
  const answeredElsewhere = async (req: Request, res: Response): Promise<boolean> => {
    if (!owned || wasForwarded(req)) return false;
    const place = await owned.locate(String(req.params.jobId));
    if (place.kind !== 'owner') return false;
    if (await forwardToOwner(req, res, place.url)) return true;
    throw notFound('The replica that runs this job did not answer');
  };

  app.post(
    '/internal/v1/jobs',
    route(async (req, res) => {
      const parsed = jobRequestSchema.safeParse(req.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const unknown = issue.code === 'unrecognized_keys';
        throw invalidRequest(
          unknown
            ? `Unknown field ${issue.keys.join(', ')}`
            : `${issue.path.join('.') || 'body'}: ${issue.message}`,
          unknown ? 'unknown_field' : 'invalid_field',
          { field: unknown ? issue.keys[0] : issue.path.join('.') },
        );
      }
      const outcome = await (owned ?? jobs).submit(parsed.data);
      res.status(STATUS[outcome.outcome]).json(outcome);
    }),
  );

  app.get(
    '/internal/v1/jobs',
    route(async (req, res) => {
      const raw = typeof req.query.ids === 'string' ? req.query.ids : '';
      const ids = raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (ids.length > 500) throw invalidRequest('At most 500 ids per query', 'too_many_ids');
      if (ids.some((id) => !ID_RE.test(id)))
        throw invalidRequest('Malformed job id', 'invalid_field', { field: 'ids' });
      res.json({ jobs: owned ? await owned.list(ids) : jobs.list(ids) });
    }),
  );

  app.get(
    '/internal/v1/jobs/:jobId',
    route(async (req, res) => {
      const id = String(req.params.jobId);
      const job = owned ? await owned.get(id) : jobs.get(id);
      if (!job) throw notFound('No such job');
      res.json({ job });
    }),
  );

  // A running job's latest picture (JSON, the JPEG in base64: internal calls read text answers).
  app.get(
    '/internal/v1/jobs/:jobId/still',
    route(async (req, res) => {
      if (await answeredElsewhere(req, res)) return;
      const still = await jobs.still(String(req.params.jobId));
      if (!still) throw notFound('No picture of this job');
      const { jpeg, ...about } = still;
      res.set('cache-control', 'no-store').json({ ...about, jpeg_base64: jpeg.toString('base64') });
    }),
  );

  // Results, for a task with zones or lines: start keeping the job's recent frames (frame-ring.ts).
  app.post(
    '/internal/v1/jobs/:jobId/ring',
    route(async (req, res) => {
      if (await answeredElsewhere(req, res)) return;
      if (!jobs.arm(String(req.params.jobId))) throw notFound('No such job');
      res.status(204).end();
    }),
  );

  // Results: the picture of an event, from the ring (JSON, the JPEGs in base64); 404 once the frame left it.
  app.post(
    '/internal/v1/jobs/:jobId/pictures',
    route(async (req, res) => {
      if (await answeredElsewhere(req, res)) return;
      const parsed = pictureRequestSchema.safeParse(req.body);
      if (!parsed.success)
        throw invalidRequest(`body: ${parsed.error.issues[0].message}`, 'invalid_field', {
          field: parsed.error.issues[0].path.join('.') || 'body',
        });
      const { seq, box, polygon } = parsed.data;
      const drawing = box ? { box } : polygon ? { polygon } : undefined;
      if (!drawing) throw invalidRequest('box or polygon is required', 'missing_field', { field: 'box' });
      const out = await jobs.picture(String(req.params.jobId), seq, drawing);
      if (!out.ok) throw notFound('The frame is no longer kept');
      res.json({
        seq: out.seq,
        frame_time_ms: out.timeMs,
        width: out.width,
        height: out.height,
        jpeg_base64: out.jpeg.toString('base64'),
        crop_base64: out.crop.toString('base64'),
      });
    }),
  );

  app.post(
    '/internal/v1/jobs/:jobId/stop',
    route(async (req, res) => {
      const id = String(req.params.jobId);
      if (await answeredElsewhere(req, res).catch(() => false)) return;
      // Not running here: whoever runs it next (or now, at its next beat) ends it `stopped`.
      const job = jobs.stop(id) ?? (owned && !wasForwarded(req) ? await owned.requestStop(id) : undefined);
      if (!job) throw notFound('No such job');
      res.json({ job });
    }),
  );

  // Job slots of every live replica, for the capacity tasks shares between subjects.
  app.get(
    '/internal/v1/capacity',
    route(async (_req, res) => {
      if (!owned) {
        res.json({ slots: jobs.maxJobs, running: jobs.runningCount, replicas: 1 });
        return;
      }
      res.json(await owned.capacity());
    }),
  );
}
