/**
 * Webhooks through the gateway, on a real run: an endpoint registered by the API receives, signed and
 * verified with the `standardwebhooks` package, the status changes of an uploaded video task (first outcome to
 * `succeeded`), frames-available announcements whose cursors page the stored frames, an image call's
 * completion and the day's video quota running out; the delivery log lists them.
 */
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { Receiver } from '../../services/results/test/webhook-receiver';
import { MEDIA, type TestStack } from '../helpers/stack';
import { detectImage, uploadVideoTask } from '../helpers/uploads';
import { startWebhookStack, until } from '../helpers/webhooks';

const KEY = 'e2e-webhooks-key-0123456789';
const CLIP = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');

describe('webhooks through the gateway', () => {
  let stack: TestStack;
  let rx: Receiver;
  beforeAll(async () => {
    ({ stack, rx } = await startWebhookStack({
      keys: `${KEY}:hooked`,
      env: {
        RESULTS_WEBHOOK_FRAMES_INTERVAL_MS: '1000',
        RESULTS_WEBHOOK_POLL_MS: '100',
        QUOTA_VIDEO_DAILY: '1',
        TASKS_POLL_INTERVAL_MS: '300',
      },
    }));
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
    await rx?.close();
  });

  it('register, receive a task lifecycle, frames, an image call and the quota running out, and read the log', async () => {
    const reg = await stack.api('POST', '/v1/vision/webhooks', {
      key: KEY,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        url: rx.url,
        event_types: [
          'vision.task.status_changed',
          'vision.task.frames_available',
          'vision.image_detection.completed',
          'vision.quota.exhausted',
        ],
      }),
    });
    expect(reg.status).toBe(201);
    rx.secrets = [reg.body.secret];
    const endpointId = reg.body.endpoint_id as string;

    const taskId = await uploadVideoTask(stack, KEY, CLIP, 'clip.mov');
    const detected = await detectImage(stack, KEY, path.join(MEDIA, 'images', 'none_bedroom_coco632.jpg'), {
      filename: 'a.jpg',
    });

    const ofTask = () =>
      rx.events().filter((e) => e.subject === taskId && e.type === 'vision.task.status_changed');
    await until(
      'the task to succeed',
      () => (ofTask().some((e) => e.data.status === 'succeeded') ? true : undefined),
      240_000,
    );
    expect(ofTask().map((e) => e.data.status)).toEqual(['running', 'succeeded']);
    expect(ofTask()[0].data.previous_status).toBe('submitting');
    // The image call's record reaches results on its own path (images' outbox, then tasks): it may come later.
    const img = await until(
      'the image call event',
      () => rx.events().find((e) => e.type === 'vision.image_detection.completed'),
      60_000,
    );
    const all = rx.events();
    expect(img.data).toMatchObject({
      task_id: detected.body.task_id,
      status: 'succeeded',
      images: { total: 1 },
    });
    const quota = all.find((e) => e.type === 'vision.quota.exhausted');
    expect(quota?.data).toMatchObject({ kind: 'video', limit: 1, used: 1 });
    const frames = all.filter((e) => e.type === 'vision.task.frames_available');
    expect(frames.length).toBeGreaterThan(0);
    // The first announcement's cursor reads the task's frames from the start.
    const first = frames[0].data as { cursor: string; new_frames: number };
    expect(first.cursor).toBe('');
    const page = await stack.api('GET', `/v1/vision/tasks/${taskId}/results?limit=500`, { key: KEY });
    expect(page.body.items.length).toBeGreaterThanOrEqual(first.new_frames);
    // The registration's verification came before the secret was known here: checked now.
    const [check, ...rest] = rx.received;
    expect(() =>
      new Webhook(reg.body.secret).verify(check.body, check.headers as Record<string, string>),
    ).not.toThrow();
    for (const r of rest) {
      expect(r.verified).toBe(true);
      expect(r.headers.traceparent).toBeUndefined();
    }

    const log = await stack.api('GET', `/v1/vision/webhooks/${endpointId}/deliveries?limit=100`, {
      key: KEY,
    });
    expect(log.status).toBe(200);
    expect(log.body.items.length).toBe(all.length);
    const other = await stack.api('GET', `/v1/vision/webhooks/${endpointId}/deliveries`, {
      key: 'nope-0123456789abcdef',
    });
    expect(other.status).toBe(401);
    const listed = await stack.api('GET', '/v1/vision/webhooks', { key: KEY });
    expect(listed.body.items.map((e: { endpoint_id: string }) => e.endpoint_id)).toEqual([endpointId]);
    const gone = await stack.api('DELETE', `/v1/vision/webhooks/${endpointId}`, { key: KEY });
    expect(gone.status).toBe(204);
  }, 300_000);
});
