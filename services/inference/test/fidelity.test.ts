/** @jest-environment ./services/inference/test/support/onnx-environment.js */
/**
 * Fidelity: the faster image path gives exactly what the raw model gives on the same image.
 * - The tensor prepareImage builds (resize + pad in one libvips pass, one-pass packing) is bit-identical
 *   to the reference letterbox of PROVENANCE.md 1.1 written out plainly here (resize, then paste at the
 *   top-left of a canvas of 114, BGR planes), for every image of ../shared/media/images.
 * - The model's output through OnnxModel (session in a worker thread) is bit-identical to onnxruntime's
 *   `session.run` called directly on this thread with the same session settings.
 * - POST /internal/v1/detect with one raw image body answers exactly what the multipart form answers.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import request from 'supertest';
import { OnnxModel, parseLabels, sessionOptions } from '../src/model/onnx-model';
import { prepareImage } from '../src/model/preprocess';
import { SessionPool } from '../src/model/session-pool';
import { IMAGES_DIR, MODELS_DIR, image, startTestInference, type TestInference } from './support/helpers';
import { signedAs } from '../../../test/helpers/identity';

const SIZE = 416;
const NAMES = readdirSync(IMAGES_DIR).filter((n) => /\.(jpe?g|png|webp)$/i.test(n));

/** PROVENANCE.md 1.1 step by step: r = min(S/h, S/w), bilinear resize, top-left on 114, BGR, NCHW. */
async function referenceTensor(data: Buffer): Promise<Float32Array> {
  const { data: px, info } = await sharp(data)
    .rotate()
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const r = Math.min(SIZE / info.height, SIZE / info.width);
  const w = Math.min(SIZE, Math.max(1, Math.round(info.width * r)));
  const h = Math.min(SIZE, Math.max(1, Math.round(info.height * r)));
  const resized = await sharp(data)
    .rotate()
    .removeAlpha()
    .toColourspace('srgb')
    .resize(w, h, { kernel: 'linear', fit: 'fill' })
    .raw()
    .toBuffer();
  expect(px.length).toBe(info.width * info.height * 3);
  const out = new Float32Array(3 * SIZE * SIZE).fill(114);
  const plane = SIZE * SIZE;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const s = (y * w + x) * 3;
      const d = y * SIZE + x;
      out[d] = resized[s + 2];
      out[plane + d] = resized[s + 1];
      out[2 * plane + d] = resized[s];
    }
  return out;
}

const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('fidelity of the image path to the raw model', () => {
  it.each(NAMES)('prepareImage(%s) is the reference letterbox tensor, bit for bit', async (name) => {
    const data = image(name);
    const prepared = await prepareImage(data, SIZE);
    expect(bytes(prepared.tensor).equals(bytes(await referenceTensor(data)))).toBe(true);
  });

  it('a pool of sessions spreads concurrent runs over its sessions, each answering what session.run answers', async () => {
    const file = path.join(MODELS_DIR, 'yolox_nano.onnx');
    const pool = await SessionPool.start(file, sessionOptions(1), 2);
    const direct = await ort.InferenceSession.create(file, sessionOptions(1));
    try {
      const input = direct.inputNames[0];
      const output = direct.outputNames[0];
      const tensors = await Promise.all(
        ['street_bus_pedestrians_coco2006.jpg', 'sheep_coco5992.jpg', 'street_people_car_coco9891.jpg'].map(
          async (name) => referenceTensor(image(name)),
        ),
      );
      const runs = tensors.map((t) => pool.run(input, output, t, [1, 3, SIZE, SIZE]));
      // Three runs on two sessions: the fewest-in-flight rule gives them 2 + 1, never 3 + 0.
      expect([...pool.busy()].sort()).toEqual([1, 2]);
      const outs = await Promise.all(runs);
      expect(pool.busy()).toEqual([0, 0]);
      for (let i = 0; i < tensors.length; i++) {
        const out = await direct.run({ [input]: new ort.Tensor('float32', tensors[i], [1, 3, SIZE, SIZE]) });
        expect(bytes(outs[i].data).equals(bytes(out[output].data as Float32Array))).toBe(true);
      }
    } finally {
      await pool.close();
      await direct.release();
    }
  });

  it('the model in its worker thread returns what session.run on this thread returns', async () => {
    const file = path.join(MODELS_DIR, 'yolox_nano.onnx');
    const labels = parseLabels(readFileSync(path.join(MODELS_DIR, 'yolox_nano.labels.txt'), 'utf8'));
    const model = await OnnxModel.load(file, { decoder: 'yolox', labels });
    const direct = await ort.InferenceSession.create(file, sessionOptions());
    try {
      for (const name of ['street_bus_pedestrians_coco2006.jpg', 'sheep_coco5992.jpg']) {
        const tensor = await referenceTensor(image(name));
        const viaWorker = await model.runRaw(tensor);
        const out = await direct.run({
          [direct.inputNames[0]]: new ort.Tensor('float32', tensor, [1, 3, SIZE, SIZE]),
        });
        const expected = out[direct.outputNames[0]];
        expect([...viaWorker.dims]).toEqual([...expected.dims]);
        expect(bytes(viaWorker.data).equals(bytes(expected.data as Float32Array))).toBe(true);
        // And the concurrent runs queued in the worker each get their own output.
        const [a, b] = await Promise.all([
          model.runRaw(tensor),
          model.runRaw(new Float32Array(tensor.length)),
        ]);
        expect(bytes(a.data).equals(bytes(expected.data as Float32Array))).toBe(true);
        expect(bytes(b.data).equals(bytes(a.data))).toBe(false);
        // Without `lend` the input is copied before runRaw returns: refilling it at once changes neither run.
        const reused = Float32Array.from(tensor);
        const first = model.runRaw(reused);
        reused.fill(0);
        const second = model.runRaw(reused);
        expect(bytes((await first).data).equals(bytes(expected.data as Float32Array))).toBe(true);
        expect(bytes((await second).data).equals(bytes(b.data))).toBe(true);
        // A lent input is moved, not copied: the caller's array is left empty, the run answers the same,
        // and the same values come back as `lent`, ready to be filled again.
        const lentTensor = Float32Array.from(tensor);
        const lent = model.runRaw(lentTensor, { lend: true });
        expect(lentTensor.length).toBe(0);
        const back = await lent;
        expect(bytes(back.data).equals(bytes(expected.data as Float32Array))).toBe(true);
        expect(back.lent && bytes(back.lent).equals(bytes(tensor))).toBe(true);
        // An array that is a view on part of a larger buffer cannot be moved: it is copied.
        const wide = new Float32Array(tensor.length + 4);
        const view = wide.subarray(4);
        view.set(tensor);
        const viewed = await model.runRaw(view, { lend: true });
        expect(view.length).toBe(tensor.length);
        expect(viewed.lent).toBeUndefined();
        expect(bytes(viewed.data).equals(bytes(expected.data as Float32Array))).toBe(true);
        // An output array of the output's length is moved to the worker and comes back holding the output;
        // one of another length is dropped and the output comes in a new array.
        const into = new Float32Array(expected.data.length).fill(7);
        const filled = model.runRaw(tensor, { into });
        expect(into.length).toBe(0);
        expect(bytes((await filled).data).equals(bytes(expected.data as Float32Array))).toBe(true);
        const wrong = await model.runRaw(tensor, { into: new Float32Array(3) });
        expect(bytes(wrong.data).equals(bytes(expected.data as Float32Array))).toBe(true);
      }
      // detect() keeps its output arrays for the next runs: the same image, detected again after and beside
      // another image's runs, answers the same.
      const [t1, t2] = await Promise.all(
        ['street_bus_pedestrians_coco2006.jpg', 'sheep_coco5992.jpg'].map((n) => referenceTensor(image(n))),
      );
      const first = await model.detect(Float32Array.from(t1), 0.25);
      const other = await model.detect(Float32Array.from(t2), 0.25, { lend: true });
      const again = await Promise.all([
        model.detect(Float32Array.from(t1), 0.25, { lend: true }),
        model.detect(Float32Array.from(t2), 0.25, { lend: true }),
      ]);
      expect(first.length).toBeGreaterThan(0);
      expect(again).toEqual([first, other]);
      expect(other).not.toEqual(first);
    } finally {
      await model.close();
      await direct.release();
    }
  });

  describe('POST /internal/v1/detect', () => {
    let svc: TestInference;
    beforeAll(async () => {
      svc = await startTestInference();
    });
    afterAll(() => svc.close());
    const auth = () => signedAs({ subject: 'svc-images', requestId: 'req-1' }, 'inference');

    it.each([
      ['person_vehicle', 'street_doubledecker_bus_coco1584.jpg', 'image/jpeg'],
      ['ship', 'boat_sailboat_kodim06.png', 'image/png'],
      ['cow_sheep', 'sheep_coco5992.jpg', 'image/jpeg'],
      ['person_vehicle', 'none_brick_facade_kodim01.webp', 'image/webp'],
    ])('%s, %s: a raw image body answers exactly what the form answers', async (scene, name, type) => {
      const form = await request(svc.parts.app)
        .post('/internal/v1/detect')
        .use(auth())
        .field('scene_code', scene)
        .attach('files', image(name), name);
      const raw = await request(svc.parts.app)
        .post(`/internal/v1/detect?scene_code=${scene}`)
        .use(auth())
        .set('content-type', type)
        .send(image(name));
      expect(form.status).toBe(200);
      expect(raw.status).toBe(200);
      expect(raw.body).toEqual(form.body);
      expect(raw.body.results[0].status).toBe('succeeded');
    });

    it('a raw body refuses a repeated scene_code, a missing one and an empty body', async () => {
      const post = (q: string, body: Buffer) =>
        request(svc.parts.app)
          .post(`/internal/v1/detect${q}`)
          .use(auth())
          .set('content-type', 'image/jpeg')
          .send(body);
      const img = image('sheep_coco5992.jpg');
      expect((await post('?scene_code=ship&scene_code=ship', img)).body.error.details.reason).toBe(
        'invalid_field',
      );
      expect((await post('', img)).body.error.details.field).toBe('scene_code');
      expect((await post('?scene_code=ship', Buffer.alloc(0))).body.error.details.field).toBe('files');
      const broken = await post('?scene_code=ship', Buffer.from('garbage'));
      expect(broken.status).toBe(200);
      expect(broken.body.results[0].status).toBe('failed');
    });
  });
});
