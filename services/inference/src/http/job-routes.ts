import type { Express } from 'express';
import { z } from 'zod';
import { invalidRequest, notFound, route } from '@vision/shared';
import { jobRequestSchema, type JobManager } from '../jobs/job-manager';

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

export function mountJobRoutes(app: Express, jobs: JobManager): void {
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
      const outcome = await jobs.submit(parsed.data);
      res.status(STATUS[outcome.outcome]).json(outcome);
    }),
  );

  app.get('/internal/v1/jobs', (req, res) => {
    const raw = typeof req.query.ids === 'string' ? req.query.ids : '';
    const ids = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (ids.length > 500) throw invalidRequest('At most 500 ids per query', 'too_many_ids');
    if (ids.some((id) => !ID_RE.test(id)))
      throw invalidRequest('Malformed job id', 'invalid_field', { field: 'ids' });
    res.json({ jobs: jobs.list(ids) });
  });

  app.get('/internal/v1/jobs/:jobId', (req, res) => {
    const job = jobs.get(String(req.params.jobId));
    if (!job) throw notFound('No such job');
    res.json({ job });
  });

  // A running job's latest picture (JSON, the JPEG in base64: internal calls read text answers).
  app.get(
    '/internal/v1/jobs/:jobId/still',
    route(async (req, res) => {
      const still = await jobs.still(String(req.params.jobId));
      if (!still) throw notFound('No picture of this job');
      const { jpeg, ...about } = still;
      res.set('cache-control', 'no-store').json({ ...about, jpeg_base64: jpeg.toString('base64') });
    }),
  );

  // Results, for a task with zones or lines: start keeping the job's recent frames (frame-ring.ts).
  app.post('/internal/v1/jobs/:jobId/ring', (req, res) => {
    if (!jobs.arm(String(req.params.jobId))) throw notFound('No such job');
    res.status(204).end();
  });

  // Results: the picture of an event, from the ring (JSON, the JPEGs in base64); 404 once the frame left it.
  app.post(
    '/internal/v1/jobs/:jobId/pictures',
    route(async (req, res) => {
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

  app.post('/internal/v1/jobs/:jobId/stop', (req, res) => {
    const job = jobs.stop(String(req.params.jobId));
    if (!job) throw notFound('No such job');
    res.json({ job });
  });
}
