/**
 * Which identities open the tasks service's routes (IDENTITY_ROUTES): the public routes take the gateway's
 * identity only, the internal task read takes results' only and answers for the caller's own tasks.
 */
import { randomUUID } from 'node:crypto';
import { TOPICS } from '@vision/shared';
import { signedAs, signFor } from '../../../test/helpers/identity';
import { type Stack, startStack, waitFor } from './harness';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const by = (issuer: string, subject: string) =>
  signedAs({ subject, requestId: `req-${randomUUID()}` }, 'tasks', issuer);

/** An image call's record of `subject`, stored as a task of kind image. */
async function imageTask(subject: string): Promise<string> {
  const taskId = randomUUID();
  const now = new Date().toISOString();
  await stack.bus.publish(TOPICS.imageCalls, [
    {
      key: taskId,
      value: {
        schema: 1,
        event_id: randomUUID(),
        type: 'image_call.recorded',
        task_id: taskId,
        subject,
        request_id: randomUUID(),
        scene_code: 'ship',
        status: 'succeeded',
        results_summary: { images: 1, succeeded: 1, failed: 0 },
        created_at: now,
        updated_at: now,
      },
    },
  ]);
  await waitFor(
    async () =>
      (await stack.http.get(`/v1/vision/tasks/${taskId}`).use(by('gateway', subject))).status === 200,
  );
  return taskId;
}

describe('identity scope of the tasks routes', () => {
  it("refuses results' key on every public route, whatever subject it names", async () => {
    const taskId = await imageTask('ida');
    for (const subject of ['ida', 'someone-else']) {
      const calls = [
        stack.http.get(`/v1/vision/tasks/${taskId}`),
        stack.http.get('/v1/vision/tasks'),
        stack.http.post(`/v1/vision/tasks/${taskId}/stop`),
        stack.http.get(`/v1/vision/tasks/${taskId}/video`),
        stack.http.get('/api/op/v1/scenes'),
        stack.http.post('/v1/vision/tasks').set('Idempotency-Key', randomUUID()).send({}),
        stack.http.post('/v1/vision/video-tasks').set('Idempotency-Key', randomUUID()),
      ];
      for (const call of calls) {
        const res = await call.use(by('results', subject));
        expect({ subject, status: res.status, code: res.body.error?.code }).toEqual({
          subject,
          status: 401,
          code: 'OP-AUTH-REQUIRED',
        });
      }
    }
    // The gateway's identity for the same subject reads it.
    expect((await stack.http.get(`/v1/vision/tasks/${taskId}`).use(by('gateway', 'ida'))).status).toBe(200);
  });

  it("answers the internal task read to results for the caller's own task only; 404 for another subject", async () => {
    const taskId = await imageTask('ida');
    const own = await stack.http.get(`/internal/v1/tasks/${taskId}`).use(by('results', 'ida'));
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ task_id: taskId, subject: 'ida', kind: 'image' });
    const other = await stack.http.get(`/internal/v1/tasks/${taskId}`).use(by('results', 'mallory'));
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('OP-NOT-FOUND');
    // As the public read answers the same stranger.
    const publicRead = await stack.http.get(`/v1/vision/tasks/${taskId}`).use(by('gateway', 'mallory'));
    expect(publicRead.status).toBe(404);
    // The gateway's identity does not open the internal read, even for the owner.
    const viaGateway = await stack.http.get(`/internal/v1/tasks/${taskId}`).use(by('gateway', 'ida'));
    expect(viaGateway.status).toBe(401);
  });

  it('refuses a header made for another route or method of the same service', async () => {
    const taskId = await imageTask('ida');
    const forList = signFor({ subject: 'ida', requestId: 'r' }, 'tasks', {
      method: 'GET',
      target: '/v1/vision/tasks',
    });
    const replayed = await stack.http.get(`/v1/vision/tasks/${taskId}`).set('x-vision-identity', forList);
    expect(replayed.status).toBe(401);
    const forRead = signFor({ subject: 'ida', requestId: 'r' }, 'tasks', {
      method: 'GET',
      target: `/v1/vision/tasks/${taskId}`,
    });
    const asStop = await stack.http.post(`/v1/vision/tasks/${taskId}/stop`).set('x-vision-identity', forRead);
    expect(asStop.status).toBe(401);
    expect(
      (await stack.http.get(`/v1/vision/tasks/${taskId}`).set('x-vision-identity', forRead)).status,
    ).toBe(200);
  });
});
