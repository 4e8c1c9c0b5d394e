import type { Express } from 'express';
import { invalidRequest, notFound, route } from '@vision/shared';
import { jobRequestSchema, type JobManager } from '../jobs/job-manager';

const STATUS = { accepted: 201, duplicate: 200, rejected: 422, over_capacity: 429 } as const;
const ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

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

  app.post('/internal/v1/jobs/:jobId/stop', (req, res) => {
    const job = jobs.stop(String(req.params.jobId));
    if (!job) throw notFound('No such job');
    res.json({ job });
  });
}
