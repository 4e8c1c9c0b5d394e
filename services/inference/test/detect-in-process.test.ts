/** @jest-environment ./services/inference/test/support/onnx-environment.js */
import request from 'supertest';
import { type CallOptions, type CallResult, REASON } from '@vision/shared';
import { image, startTestInference, type TestInference } from './support/helpers';
import { signedAs } from '../../../test/helpers/identity';

/**
 * Inference's detect call answered in process (the images service of the standalone process): what the HTTP
 * route answers for the same raw image, the same refusals, the same turn in the admission queue.
 */
let svc: TestInference;
beforeAll(async () => {
  svc = await startTestInference({ INFERENCE_DETECT_MAX_IN_FLIGHT: '1' });
});
afterAll(() => svc.close());

const identity = { subject: 'svc-images', requestId: 'req-in-process' };
const target = (scene: string) => `/internal/v1/detect?scene_code=${encodeURIComponent(scene)}`;

/** The answer in process, and the route's over HTTP, for one raw image. */
async function bothWays(scene: string, data: Buffer, type = 'image/jpeg') {
  const opts: CallOptions = { identity, body: data, headers: { 'content-type': type } };
  const here = (await svc.parts.answerer(target(scene), opts, new AbortController().signal)) as CallResult;
  const http = await request(svc.parts.app)
    .post(target(scene))
    .use(signedAs(identity, 'inference'))
    .set('content-type', type)
    .send(data);
  return { here, http };
}

describe('the detect call in process', () => {
  it('answers a raw image with the results the route gives for it', async () => {
    const { here, http } = await bothWays('person_vehicle', image('street_people_car_coco9891.jpg'));
    expect(http.status).toBe(200);
    expect(here.status).toBe(200);
    // The same objects, to the last digit once written as JSON.
    expect(JSON.parse(JSON.stringify(here.body))).toEqual(http.body);
    const results = (here.body as { results: { status: string; objects: { label: string }[] }[] }).results;
    expect(results[0].objects.map((o) => o.label)).toEqual(expect.arrayContaining(['person', 'car']));
  });

  it('refuses an unknown scene, an empty body and an undecodable image as the route does', async () => {
    for (const [scene, data] of [
      ['dogs', image('sheep_coco5992.jpg')],
      ['ship', Buffer.alloc(0)],
      ['ship', Buffer.from('garbage')],
    ] as const) {
      const { here, http } = await bothWays(scene, data);
      expect([scene, here.status, here.body]).toEqual([
        scene,
        http.status,
        expect.objectContaining(
          http.status === 200
            ? { results: http.body.results }
            : {
                error: expect.objectContaining({
                  code: http.body.error.code,
                  details: http.body.error.details,
                  request_id: identity.requestId,
                }),
              },
        ),
      ]);
    }
  });

  it("takes a turn in the admission queue: a caller's deadline already passed gets 503 with Retry-After", async () => {
    const opts: CallOptions = {
      identity,
      body: image('sheep_coco5992.jpg'),
      headers: { 'content-type': 'image/jpeg' },
      deadline: Date.now() - 1,
    };
    const here = (await svc.parts.answerer(
      target('cow_sheep'),
      opts,
      new AbortController().signal,
    )) as CallResult;
    expect(here.status).toBe(503);
    expect(here.headers['retry-after']).toMatch(/^\d+$/);
    expect((here.body as { error: { details: { reason: string } } }).error.details.reason).toBe(
      REASON.deadline_exceeded,
    );
  });

  it('a caller that gives up while it waits for its turn leaves the queue without an answer of the model', async () => {
    const data = image('street_people_car_coco9891.jpg');
    const opts: CallOptions = { identity, body: data, headers: { 'content-type': 'image/jpeg' } };
    // One call in flight at a time: the second waits, and its caller gives up.
    const first = svc.parts.answerer(target('person_vehicle'), opts, new AbortController().signal);
    const gone = new AbortController();
    const second = svc.parts.answerer(target('person_vehicle'), opts, gone.signal);
    gone.abort();
    const [a, b] = (await Promise.all([first, second])) as CallResult[];
    expect(a.status).toBe(200);
    expect(b.status).toBe(503);
    expect(b.body).not.toHaveProperty('results');
  });

  it('leaves every other call to HTTP: a multipart form, another path, a body that is not bytes', () => {
    const signal = new AbortController().signal;
    const form: CallOptions = {
      identity,
      body: Buffer.from('--x\r\n'),
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    };
    expect(svc.parts.answerer(target('ship'), form, signal)).toBeUndefined();
    expect(svc.parts.answerer('/internal/v1/scenes', { identity }, signal)).toBeUndefined();
    expect(
      svc.parts.answerer(
        target('ship'),
        { identity, json: { x: 1 }, headers: { 'content-type': 'image/jpeg' } },
        signal,
      ),
    ).toBeUndefined();
  });
});
