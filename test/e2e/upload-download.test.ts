import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import { assertMatchesOpenApi } from '../helpers/openapi';

const OWNER = 'e2e-download-owner-0123456789';
const OTHER = 'e2e-download-other-0123456789';
const MOV = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');
const MP4 = path.join(MEDIA, 'videos', 'person_bicycle_car_parkinglot_intel.mp4');

/**
 * The owner-only download of a file task's stored upload (GET /v1/vision/tasks/{id}/video), through
 * the gateway, on the standalone stack (directory store) and the distributed one (MinIO).
 */
describe('stored upload download with HTTP ranges', () => {
  let stack: TestStack;
  let media: MediaServer;
  let movTask: string;
  let mp4Task: string;

  const upload = async (file: string) => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('file', new Blob([readFileSync(file)]), path.basename(file));
    const r = await stack.api('POST', '/v1/vision/video-tasks', {
      key: OWNER,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(r.status).toBe(201);
    return r.body.task_id as string;
  };

  /** A raw GET (the body as bytes), checked against the OpenAPI document like every answer. */
  const get = async (id: string, key: string, headers: Record<string, string> = {}, method = 'GET') => {
    const urlPath = `/v1/vision/tasks/${id}/video`;
    const res = await fetch(`${stack.url}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...headers },
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get('content-type') ?? undefined;
    const body: unknown = type?.includes('json') ? JSON.parse(bytes.toString('utf8')) : bytes;
    assertMatchesOpenApi(method, urlPath, res.status, type, method === 'HEAD' ? undefined : body);
    return { status: res.status, headers: res.headers, bytes, body };
  };

  beforeAll(async () => {
    stack = await startStack({
      keys: `${OWNER}:download-owner,${OTHER}:download-other`,
      env: { QUOTA_VIDEO_DAILY: '10', TASKS_MAX_ACTIVE: '10' },
    });
    media = await startMediaServer({ 'parking.mp4': MP4 });
    movTask = await upload(MOV);
    mp4Task = await upload(MP4);
  }, 120_000);
  afterAll(async () => {
    await media?.close();
    await stack?.close();
  });

  it('gives the owner the whole file, byte for byte, with its type told by content', async () => {
    const mov = await get(movTask, OWNER);
    expect(mov.status).toBe(200);
    expect(mov.bytes.equals(readFileSync(MOV))).toBe(true);
    expect(mov.headers.get('content-type')).toBe('video/quicktime');
    expect(mov.headers.get('accept-ranges')).toBe('bytes');
    expect(mov.headers.get('content-length')).toBe(String(readFileSync(MOV).length));
    const mp4 = await get(mp4Task, OWNER);
    expect(mp4.status).toBe(200);
    expect(mp4.bytes.equals(readFileSync(MP4))).toBe(true);
    expect(mp4.headers.get('content-type')).toBe('video/mp4');
    const head = await get(mp4Task, OWNER, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(readFileSync(MP4).length));
  });

  it('answers byte ranges with 206 and Content-Range; a range past the end gets 416', async () => {
    const file = readFileSync(MOV);
    const size = file.length;
    const mid = await get(movTask, OWNER, { range: 'bytes=1000-1999' });
    expect(mid.status).toBe(206);
    expect(mid.headers.get('content-range')).toBe(`bytes 1000-1999/${size}`);
    expect(mid.bytes.equals(file.subarray(1000, 2000))).toBe(true);

    const open = await get(movTask, OWNER, { range: `bytes=${size - 10}-` });
    expect(open.status).toBe(206);
    expect(open.bytes.equals(file.subarray(size - 10))).toBe(true);

    const suffix = await get(movTask, OWNER, { range: 'bytes=-500' });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get('content-range')).toBe(`bytes ${size - 500}-${size - 1}/${size}`);
    expect(suffix.bytes.equals(file.subarray(size - 500))).toBe(true);

    // An end past the file is cut to the file.
    const over = await get(movTask, OWNER, { range: `bytes=${size - 5}-${size + 1000}` });
    expect(over.status).toBe(206);
    expect(over.bytes.equals(file.subarray(size - 5))).toBe(true);

    const past = await get(movTask, OWNER, { range: `bytes=${size}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${size}`);
    expect(past.body).toMatchObject({
      error: { code: 'OP-TASK-REQUEST-INVALID', details: { reason: 'range_not_satisfiable' } },
    });

    // Ignored (whole file): a malformed Range, several ranges, an If-Range that does not match.
    for (const headers of [
      { range: 'bytes=abc' } as Record<string, string>,
      { range: 'bytes=0-9,100-109' },
      { range: 'bytes=0-9', 'if-range': '"not-the-etag"' },
    ]) {
      const whole = await get(movTask, OWNER, headers);
      expect(whole.status).toBe(200);
      expect(whole.bytes.length).toBe(size);
    }
    const etag = mid.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    const matching = await get(movTask, OWNER, { range: 'bytes=0-9', 'if-range': etag });
    expect(matching.status).toBe(206);
    expect(matching.bytes.equals(file.subarray(0, 10))).toBe(true);
  });

  it('is 404 for another key, an unknown task, a stream task and an image call record', async () => {
    for (const headers of [{}, { range: 'bytes=0-9' }] as Record<string, string>[]) {
      const other = await get(movTask, OTHER, headers);
      expect(other.status).toBe(404);
      expect(other.body).toMatchObject({ error: { code: 'OP-NOT-FOUND' } });
    }
    expect((await get('no-such-task', OWNER)).status).toBe(404);

    const stream = await stack.api('POST', '/v1/vision/tasks', {
      key: OWNER,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: `${media.url}/file/parking.mp4` }),
    });
    expect(stream.status).toBe(201);
    expect((await get(stream.body.task_id, OWNER)).status).toBe(404);

    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('files', new Blob([readFileSync(path.join(MEDIA, 'images', 'sheep_coco5992.jpg'))]), 'a.jpg');
    const image = await stack.api('POST', '/v1/vision/image-detections', {
      key: OWNER,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(image.status).toBe(201);
    expect((await get(image.body.task_id, OWNER)).status).toBe(404);
  });

  it('needs a valid key', async () => {
    const r = await get(movTask, 'not-a-valid-key-0123456789');
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ error: { code: 'OP-AUTH-REQUIRED' } });
  });
});
