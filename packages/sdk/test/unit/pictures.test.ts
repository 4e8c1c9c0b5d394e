import { VisionApiError, VisionClient } from '../../src';

/**
 * An event's snapshot and a track's best shot read as bytes: the request the SDK sends, the picture and the frame
 * it shows, and the typed errors of the service's answers. The service is a scripted fetch here (against the
 * real stack: ../places.test.ts).
 */
const TASK = '7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b';
const EVENT = '0123456789abcdef0123456789abcdef';
/** The first bytes of a JPEG (SOI, APP0) and its end (EOI): the SDK hands them over as they came. */
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0xff, 0xd9]);

function scripted(answers: (() => Response)[]) {
  const sent: { method: string; url: string; auth: string | null }[] = [];
  const fetchImpl = async (req: Request): Promise<Response> => {
    sent.push({ method: req.method, url: req.url, auth: req.headers.get('authorization') });
    const next = answers.shift();
    if (!next) throw new Error('no answer scripted');
    return next();
  };
  const client = new VisionClient({
    baseUrl: 'http://vision.test/',
    apiKey: 'key-0123456789',
    fetch: fetchImpl,
    retry: { minDelayMs: 1, maxDelayMs: 2 },
  });
  return { sent, client };
}

const jpeg =
  (headers: Record<string, string> = {}) =>
  () =>
    new Response(JPEG, { status: 200, headers: { 'content-type': 'image/jpeg', ...headers } });
const failure =
  (status: number, code: string, details: Record<string, unknown> = {}) =>
  () =>
    new Response(JSON.stringify({ error: { code, message: code, request_id: 'r-1', details } }), {
      status,
      headers: { 'content-type': 'application/json' },
    });

describe("an event's snapshot", () => {
  it('is read from the event path with the key, and answers the bytes, their type and the frame they show', async () => {
    const { sent, client } = scripted([
      jpeg({ 'x-frame-seq': '42', 'x-frame-time-ms': '4200', etag: '"abc"' }),
      jpeg(),
    ]);
    const picture = await client.places.eventSnapshot(TASK, EVENT);
    expect(picture).toEqual({
      bytes: JPEG,
      contentType: 'image/jpeg',
      seq: 42,
      frameTimeMs: 4200,
      etag: '"abc"',
    });
    expect(picture.bytes).toBeInstanceOf(Uint8Array);
    // The crop is asked for with crop=true; an answer without the frame headers has none of those fields.
    expect(await client.places.eventSnapshot(TASK, EVENT, { crop: true })).toEqual({
      bytes: JPEG,
      contentType: 'image/jpeg',
    });
    expect(sent).toEqual([
      {
        method: 'GET',
        url: `http://vision.test/v1/vision/tasks/${TASK}/events/${EVENT}/snapshot`,
        auth: 'Bearer key-0123456789',
      },
      {
        method: 'GET',
        url: `http://vision.test/v1/vision/tasks/${TASK}/events/${EVENT}/snapshot?crop=true`,
        auth: 'Bearer key-0123456789',
      },
    ]);
  });

  it('of an event without one throws OP-TASK-NO-SNAPSHOT with its reason; an unknown event OP-NOT-FOUND', async () => {
    const { client } = scripted([
      failure(404, 'OP-TASK-NO-SNAPSHOT', { snapshot_reason: 'frame_gone' }),
      failure(404, 'OP-NOT-FOUND'),
      failure(400, 'OP-TASK-REQUEST-INVALID', { reason: 'invalid_field' }),
    ]);
    const none = await client.places.eventSnapshot(TASK, EVENT).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(VisionApiError);
    expect(none).toMatchObject({
      status: 404,
      code: 'OP-TASK-NO-SNAPSHOT',
      details: { snapshot_reason: 'frame_gone' },
      requestId: 'r-1',
    });
    await expect(client.places.eventSnapshot(TASK, EVENT)).rejects.toMatchObject({
      status: 404,
      code: 'OP-NOT-FOUND',
    });
    await expect(client.places.eventSnapshot(TASK, 'not-an-id')).rejects.toMatchObject({
      status: 400,
      reason: 'invalid_field',
    });
  });

  it('is asked again after a 5xx, like every call', async () => {
    const { sent, client } = scripted([failure(503, 'OP-SYS-UNAVAILABLE'), jpeg()]);
    expect((await client.places.eventSnapshot(TASK, EVENT)).bytes).toEqual(JPEG);
    expect(sent).toHaveLength(2);
  });
});

describe("a track's best shot", () => {
  it('is read from the track path, whole or cropped; none yet throws OP-TASK-NO-SNAPSHOT', async () => {
    const { sent, client } = scripted([
      jpeg({ 'x-frame-seq': '7' }),
      jpeg(),
      failure(404, 'OP-TASK-NO-SNAPSHOT', { snapshot_reason: 'not_captured' }),
    ]);
    expect(await client.places.bestShot(TASK, '17')).toMatchObject({ bytes: JPEG, seq: 7 });
    await client.places.bestShot(TASK, 'a:b', { crop: true });
    await expect(client.places.bestShot(TASK, '18')).rejects.toMatchObject({
      code: 'OP-TASK-NO-SNAPSHOT',
      details: { snapshot_reason: 'not_captured' },
    });
    expect(sent.map((s) => s.url)).toEqual([
      `http://vision.test/v1/vision/tasks/${TASK}/tracks/17/best_shot`,
      `http://vision.test/v1/vision/tasks/${TASK}/tracks/a%3Ab/best_shot?crop=true`,
      `http://vision.test/v1/vision/tasks/${TASK}/tracks/18/best_shot`,
    ]);
  });
});
