/**
 * Internal identity through the real services of the standalone process: every internal
 * call carries a header signed for the service it is for, expiring within seconds. Inference checks it
 * in standalone mode too: a header made for tasks, an expired one, one signed with another secret, or
 * none, are refused; the public API (gateway -> images -> quota, inference, tasks) keeps working.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { IDENTITY_HEADER, IDENTITY_TTL_MS, IDENTITY_CLOCK_SKEW_MS, signIdentity } from '@vision/shared';
import { start as startInference } from '@vision/inference';
import { MEDIA, startStandaloneStack, type TestStack } from '../helpers/stack';

const KEY = 'identity-acme-0123456789abcdef';

describe('internal identity in the standalone process', () => {
  let stack: TestStack;
  let secret: string;
  let inferenceUrl: string;
  beforeAll(async () => {
    stack = await startStandaloneStack({ keys: `${KEY}:acme` });
    const standalone = stack.standalone!;
    secret = standalone.env.INTERNAL_SECRET!;
    inferenceUrl = standalone.services.inference.url;
  }, 120_000);
  afterAll(() => stack?.close());

  const scenes = (header?: string) =>
    fetch(`${inferenceUrl}/internal/v1/scenes`, { headers: header ? { [IDENTITY_HEADER]: header } : {} });
  const id = { subject: 'acme', requestId: 'req-identity' };

  it('inference refuses a header for another service, an expired one, a forged one and none', async () => {
    const refused = {
      none: undefined,
      for_tasks: signIdentity(secret, id, 'tasks'),
      for_images: signIdentity(secret, id, 'images'),
      expired: signIdentity(
        secret,
        id,
        'inference',
        Date.now() - IDENTITY_TTL_MS - IDENTITY_CLOCK_SKEW_MS - 1000,
      ),
      other_secret: signIdentity('another-secret-of-enough-length', id, 'inference'),
    };
    for (const [what, header] of Object.entries(refused)) {
      const res = await scenes(header);
      expect({ what, status: res.status }).toEqual({ what, status: 401 });
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('OP-AUTH-REQUIRED');
    }
    expect((await scenes(signIdentity(secret, id, 'inference'))).status).toBe(200);
  });

  it('the public API works through gateway, images, quota, inference and tasks with audience-bound headers', async () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    const jpg = readFileSync(path.join(MEDIA, 'images/street_bus_pedestrians_coco2006.jpg'));
    form.append('files', new Blob([jpg], { type: 'image/jpeg' }), 'a.jpg');
    const created = await stack.api('POST', '/v1/vision/image-detections', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(created.status).toBe(201);
    expect(created.body.results[0].status).toBe('succeeded');
    const task = await stack.api('GET', `/v1/vision/tasks/${created.body.task_id}`, { key: KEY });
    expect(task.status).toBe(200);
    const quota = await stack.api('GET', '/v1/vision/quota', { key: KEY });
    expect(quota.status).toBe(200);
    expect(quota.body.images.used).toBe(1);
  }, 60_000);

  it('inference does not start without an identity secret', async () => {
    const env = { ...stack.standalone!.env, INTERNAL_SECRET: undefined };
    await expect(startInference({ env, port: 0, host: '127.0.0.1' })).rejects.toThrow(/INTERNAL_SECRET/);
  });
});
