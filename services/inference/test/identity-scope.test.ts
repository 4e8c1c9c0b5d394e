/** @jest-environment ./services/inference/test/support/onnx-environment.js */
/**
 * Which identities open the inference routes (IDENTITY_ROUTES): jobs are the tasks service's, image
 * detection is the images service's, and both read the scene list. The images service's key, held by the
 * process that detects images for callers, can neither start nor stop nor read a job.
 */
import request from 'supertest';
import { signedAs } from '../../../test/helpers/identity';
import { startTestInference, type TestInference } from './support/helpers';

let svc: TestInference;
beforeAll(async () => {
  svc = await startTestInference({ INFERENCE_MAX_JOBS: '1' });
});
afterAll(() => svc.close());

const by = (issuer: string) =>
  signedAs({ subject: `svc-${issuer}`, requestId: `req-${issuer}` }, 'inference', issuer);
const job = { job_id: 'j-scope', scene_code: 'ship', source: { type: 'object', key: 'v/none.mov' } };

describe('identity scope of the inference routes', () => {
  it("refuses images' key on every job route: it cannot start, stop or read a job", async () => {
    const app = svc.parts.app;
    const calls = [
      request(app).post('/internal/v1/jobs').send(job),
      request(app).post('/internal/v1/jobs/j-scope/stop'),
      request(app).get('/internal/v1/jobs/j-scope'),
      request(app).get('/internal/v1/jobs?ids=j-scope'),
    ];
    for (const call of calls) {
      const res = await call.use(by('images'));
      expect({ status: res.status, code: res.body.error?.code }).toEqual({
        status: 401,
        code: 'OP-AUTH-REQUIRED',
      });
    }
    // Nothing was started.
    expect(svc.parts.jobs.get('j-scope')).toBeUndefined();
  });

  it("opens the scene list to both callers, jobs to tasks' key only, detection to images' key only", async () => {
    const app = svc.parts.app;
    for (const issuer of ['tasks', 'images'])
      expect((await request(app).get('/internal/v1/scenes').use(by(issuer))).status).toBe(200);
    // tasks' key reaches the job routes (404: no such job, the route ran).
    expect((await request(app).get('/internal/v1/jobs/j-scope').use(by('tasks'))).status).toBe(404);
    expect((await request(app).post('/internal/v1/jobs/j-scope/stop').use(by('tasks'))).status).toBe(404);
    // and not detection.
    const detect = await request(app)
      .post('/internal/v1/detect?scene_code=ship')
      .set('content-type', 'image/jpeg')
      .use(by('tasks'))
      .send(Buffer.from('not an image'));
    expect(detect.status).toBe(401);
  });
});
