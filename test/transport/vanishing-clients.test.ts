import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { storedObjects } from '../helpers/stored-objects';
import { eventually, head, imageForm, openFilesUnder, quotaOf, rawClient, serving, sleep } from './support';

const KEY = 'transport-vanish-0123456789';
const MiB = 1024 * 1024;

/** A multipart video body of `fileBytes` (a real clip's bytes first, padded), with the scene field. */
function videoForm(fileBytes: number): { contentType: string; body: Buffer } {
  const boundary = 'transport-video-3c9a';
  const clip = readFileSync(path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv.mp4'));
  const file = Buffer.alloc(fileBytes);
  clip.copy(file, 0, 0, Math.min(clip.length, fileBytes));
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="scene_code"\r\n\r\nperson_vehicle\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="v.mp4"\r\nContent-Type: video/mp4\r\n\r\n`,
      ),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
  };
}

/**
 * A client that vanishes at any point — during the head, mid-body, after its answer began, or halfway
 * through a 512 MB upload — leaves nothing behind: no task, no charge or hold, no stored object or
 * temporary file, no descriptor held open; and the service serves on.
 */
describe('transport: clients that vanish leave nothing behind', () => {
  let stack: TestStack;
  let quotaBefore: unknown;
  let objectsBefore: string[];
  beforeAll(async () => {
    stack = await startStack({ keys: `${KEY}:transport-vanish` });
    quotaBefore = await quotaOf(stack, KEY);
    objectsBefore = await storedObjects(stack);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  /** What must hold after each vanished client, once the services have noticed. */
  const nothingLeft = async () => {
    expect(
      await eventually(
        () => quotaOf(stack, KEY),
        (q) => JSON.stringify(q) === JSON.stringify(quotaBefore),
      ),
    ).toEqual(quotaBefore);
    const tasks = await stack.api('GET', '/v1/vision/tasks', { key: KEY });
    expect(tasks.status).toBe(200);
    expect(tasks.body.items).toEqual([]);
    expect(
      await eventually(
        () => storedObjects(stack),
        (o) => o.length === objectsBefore.length,
      ),
    ).toEqual(objectsBefore);
    if (stack.kind === 'standalone')
      expect(
        await eventually(
          () => openFilesUnder(stack.dataDir).filter((f) => f.includes('objects')),
          (f) => f.length === 0,
        ),
      ).toEqual([]);
    expect(await serving(stack, KEY)).toBe(true);
  };

  it('during the head', async () => {
    const c = await rawClient(stack.url);
    await c.write(
      `POST /v1/vision/image-detections HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${KEY}\r\nIdempot`,
    );
    await sleep(100);
    c.socket.destroy();
    await nothingLeft();
  });

  it('in the middle of an image upload', async () => {
    const { contentType, body } = imageForm(4 * MiB, 'person_vehicle');
    const c = await rawClient(stack.url);
    await c.write(
      head('/v1/vision/image-detections', {
        authorization: `Bearer ${KEY}`,
        'idempotency-key': randomUUID(),
        'content-type': contentType,
        'content-length': body.length,
      }),
    );
    await c.write(body.subarray(0, 2 * MiB));
    await sleep(200);
    c.socket.destroy();
    await nothingLeft();
  });

  it('after its answer began', async () => {
    const c = await rawClient(stack.url);
    await c.write(`GET /openapi.json HTTP/1.1\r\nHost: t\r\n\r\n`);
    await new Promise<void>((r) => c.socket.once('data', () => r()));
    c.socket.destroy();
    await nothingLeft();
  });

  it('halfway through a 512 MB video upload', async () => {
    const { contentType, body } = videoForm(512 * 1000 * 1000);
    const c = await rawClient(stack.url);
    await c.write(
      head('/v1/vision/video-tasks', {
        authorization: `Bearer ${KEY}`,
        'idempotency-key': randomUUID(),
        'content-type': contentType,
        'content-length': body.length,
      }),
    );
    for (let sent = 0; sent < body.length / 2; sent += 8 * MiB)
      await c.write(body.subarray(sent, sent + 8 * MiB));
    c.socket.destroy();
    await nothingLeft();
  }, 120_000);
});
