/** @jest-environment ./services/inference/test/support/onnx-environment.js */
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { IMAGE_UPLOAD, REASON } from '@vision/shared';
import { pngOfSize } from '../../../test/helpers/png-pad';
import { BUNDLED_MODELS_DIR, SceneCatalogue } from '../src/catalogue/catalogue';
import { FIRE_SMOKE_DEFAULT_LOWER_BOUND, FIRE_SMOKE_DEFAULT_MODEL } from '../src/catalogue/scene-config';
import { image, startTestInference, type TestInference } from './support/helpers';
import { signedAs } from '../../../test/helpers/identity';

let svc: TestInference;
beforeAll(async () => {
  svc = await startTestInference({ INFERENCE_MAX_JOBS: '1' });
});
afterAll(() => svc.close());

const auth = () => signedAs({ subject: 'svc-images', requestId: 'req-1' }, 'inference');

describe('GET /internal/v1/scenes', () => {
  it('lists every scene with its engine, labels and lower bound', async () => {
    const res = await request(svc.parts.app).get('/internal/v1/scenes').use(auth());
    expect(res.status).toBe(200);
    const byCode = Object.fromEntries(
      (res.body.scenes as { scene_code: string }[]).map((s) => [s.scene_code, s]),
    );
    expect(Object.keys(byCode).sort()).toEqual([
      'cow_sheep',
      'fire_smoke',
      'fishing',
      'person_vehicle',
      'ship',
    ]);
    expect(byCode.person_vehicle).toMatchObject({
      enabled: true,
      engine: 'onnx:yolox_nano.onnx',
      lower_bound: 0.3,
    });
    expect(byCode.ship).toMatchObject({ enabled: true, labels: ['ship'] });
    expect(byCode.cow_sheep).toMatchObject({ enabled: true, labels: ['cattle', 'sheep'] });
    expect(byCode.fishing).toMatchObject({
      enabled: true,
      engine: 'rule:person-on-boat',
      labels: ['fishing'],
    });
    // our own fire/smoke model (models/ at the repository root) serves fire_smoke by default
    expect(byCode.fire_smoke).toMatchObject({
      enabled: true,
      engine: 'onnx:fire_smoke_yolox_nano.onnx',
      labels: ['fire', 'smoke'],
      lower_bound: FIRE_SMOKE_DEFAULT_LOWER_BOUND,
    });
  });

  it('falls back to the built-in fire detector when our fire model is not installed, or when configured', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'no-models-'));
    const none = await SceneCatalogue.load({
      modelsDir: empty,
      bundledModelsDir: null,
      fire: { FIRE_SMOKE_DECODER: 'yolov8' },
    });
    expect(none.status('fire_smoke')).toMatchObject({ enabled: true, engine: 'builtin:fire-colour-motion' });
    const scenesFile = path.join(empty, 'scenes.json');
    writeFileSync(
      scenesFile,
      JSON.stringify({ scenes: { fire_smoke: { engine: 'builtin', detector: 'fire-colour-motion' } } }),
    );
    const chosen = await SceneCatalogue.load({
      modelsDir: empty,
      scenesFile,
      fire: { FIRE_SMOKE_DECODER: 'yolov8' },
    });
    expect(chosen.status('fire_smoke')).toMatchObject({
      enabled: true,
      engine: 'builtin:fire-colour-motion',
    });
    // found in VISION_MODELS_DIR as well as in the bundled directory
    copyFileSync(
      path.join(BUNDLED_MODELS_DIR, FIRE_SMOKE_DEFAULT_MODEL),
      path.join(empty, FIRE_SMOKE_DEFAULT_MODEL),
    );
    copyFileSync(
      path.join(BUNDLED_MODELS_DIR, 'fire_smoke_yolox_nano.labels.txt'),
      path.join(empty, 'fire_smoke_yolox_nano.labels.txt'),
    );
    const local = await SceneCatalogue.load({
      modelsDir: empty,
      bundledModelsDir: null,
      fire: { FIRE_SMOKE_DECODER: 'yolov8', FIRE_SMOKE_LOWER_BOUND: 0.6 },
    });
    expect(local.status('fire_smoke')).toMatchObject({
      enabled: true,
      engine: 'onnx:fire_smoke_yolox_nano.onnx',
      lower_bound: 0.6,
    });
    await Promise.all([none.close(), chosen.close(), local.close()]);
  });

  it('requires the signed identity', async () => {
    const res = await request(svc.parts.app).get('/internal/v1/scenes');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('OP-AUTH-REQUIRED');
  });

  it('reports scenes whose model file is missing as disabled, with a reason', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'no-models-'));
    const cat = await SceneCatalogue.load({ modelsDir: empty, fire: { FIRE_SMOKE_DECODER: 'yolov8' } });
    for (const code of ['person_vehicle', 'ship', 'cow_sheep', 'fishing'] as const) {
      expect(cat.status(code)).toMatchObject({
        enabled: false,
        reason: 'model file yolox_nano.onnx is not installed',
      });
      expect(cat.engine(code)).toBeUndefined();
    }
    // a configured fire model that is missing disables fire_smoke as well
    const cat2 = await SceneCatalogue.load({
      modelsDir: empty,
      fire: { FIRE_SMOKE_MODEL: 'fire.onnx', FIRE_SMOKE_DECODER: 'yolov8' },
    });
    expect(cat2.status('fire_smoke')).toMatchObject({ enabled: false, engine: 'onnx:fire.onnx' });
  });
});

describe('POST /internal/v1/detect', () => {
  it('detects each image in input order; a broken image fails alone', async () => {
    const res = await request(svc.parts.app)
      .post('/internal/v1/detect')
      .use(auth())
      .field('scene_code', 'person_vehicle')
      .attach('files', image('street_people_car_coco9891.jpg'), 'a.jpg')
      .attach('files', Buffer.from('garbage'), 'b.jpg')
      .attach('files', image('none_brick_facade_kodim01.webp'), 'c.webp')
      .attach('files', image('boat_pier_kodim11.png'), 'd.png');
    expect(res.status).toBe(200);
    const r = res.body.results;
    expect(r.map((x: { seq: number; status: string }) => [x.seq, x.status])).toEqual([
      [0, 'succeeded'],
      [1, 'failed'],
      [2, 'succeeded'],
      [3, 'succeeded'],
    ]);
    expect(r[0].image).toEqual({ width: 640, height: 480 });
    expect(r[0].objects.map((o: { label: string }) => o.label)).toEqual(
      expect.arrayContaining(['person', 'car']),
    );
    expect(r[0].objects[0]).not.toHaveProperty('track_id');
    expect(r[0].objects[0].bbox.format).toBe('cxcywh_normalized');
    expect(typeof r[1].reason).toBe('string');
    expect(r[2].image).toEqual({ width: 768, height: 512 });
  });

  it('fire_smoke: fire images yield fire or smoke through the built-in detector', async () => {
    const res = await request(svc.parts.app)
      .post('/internal/v1/detect')
      .use(auth())
      .field('scene_code', 'fire_smoke')
      .attach('files', image('fire_forest_dfire_web10474.jpg'), 'f.jpg')
      .attach('files', image('fire_smoke_forest_dfire_pd01323.jpg'), 'g.jpg');
    expect(res.status).toBe(200);
    for (const r of res.body.results) {
      expect(r.status).toBe('succeeded');
      expect(r.objects.some((o: { label: string }) => o.label === 'fire' || o.label === 'smoke')).toBe(true);
    }
  });

  it('rejects a missing or unknown scene, an unknown field, a non-multipart body and too many files', async () => {
    const app = svc.parts.app;
    const noScene = await request(app)
      .post('/internal/v1/detect')
      .use(auth())
      .attach('files', image('sheep_coco5992.jpg'), 'a.jpg');
    expect(noScene.status).toBe(400);
    expect(noScene.body.error.details.reason).toBe(REASON.missing_field);
    const unknownScene = await request(app)
      .post('/internal/v1/detect')
      .use(auth())
      .field('scene_code', 'dogs')
      .attach('files', image('sheep_coco5992.jpg'), 'a.jpg');
    expect(unknownScene.status).toBe(400);
    const extra = await request(app)
      .post('/internal/v1/detect')
      .use(auth())
      .field('scene_code', 'ship')
      .field('min_score', '0.5')
      .attach('files', image('sheep_coco5992.jpg'), 'a.jpg');
    expect(extra.status).toBe(400);
    expect(extra.body.error.details.reason).toBe(REASON.unknown_field);
    const json = await request(app).post('/internal/v1/detect').use(auth()).send({ scene_code: 'ship' });
    expect(json.status).toBe(400);
    expect(json.body.error.details.reason).toBe(REASON.not_multipart);
    let many = request(app).post('/internal/v1/detect').use(auth()).field('scene_code', 'ship');
    for (let i = 0; i < 11; i++) many = many.attach('files', Buffer.from('x'), `f${i}.jpg`);
    const tooMany = await many;
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details.reason).toBe(REASON.too_many_files);
  });

  it('detects an image of exactly 8 MiB; one of 8 MiB + 1 byte fails alone (SPEC.md 4.6)', async () => {
    const png = image('boat_sailboat_kodim06.png');
    const res = await request(svc.parts.app)
      .post('/internal/v1/detect')
      .use(auth())
      .field('scene_code', 'ship')
      .attach('files', pngOfSize(png, IMAGE_UPLOAD.maxFileBytes), 'exact.png')
      .attach('files', pngOfSize(png, IMAGE_UPLOAD.maxFileBytes + 1), 'over.png');
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ seq: 0, status: 'succeeded' });
    expect(res.body.results[1]).toMatchObject({ seq: 1, status: 'failed' });
  });
});

describe('jobs API', () => {
  it('accepted, duplicate, over capacity, rejected, GET one and many, stop, 404', async () => {
    await svc.store.put('v/clip.mov', image('sheep_coco5992.jpg')); // not a video: the job fails, but is accepted
    const app = svc.parts.app;
    const post = (body: object) => request(app).post('/internal/v1/jobs').use(auth()).send(body);

    const unsafe = await post({
      job_id: 'j-unsafe',
      scene_code: 'ship',
      source: { type: 'stream', url: 'http://127.0.0.1:9/x' },
    });
    expect(unsafe.status).toBe(422);
    expect(unsafe.body).toEqual({ outcome: 'rejected', reason: expect.stringMatching(/loopback address/) });
    const meta = await post({
      job_id: 'j-meta',
      scene_code: 'ship',
      source: { type: 'stream', url: 'http://169.254.169.254/latest' },
    });
    expect(meta.body.reason).toMatch(/metadata/);
    const scheme = await post({
      job_id: 'j-file',
      scene_code: 'ship',
      source: { type: 'stream', url: 'file:///etc/passwd' },
    });
    expect(scheme.status).toBe(422);
    const unknown = await post({
      job_id: 'j-x',
      scene_code: 'ship',
      source: { type: 'object', key: 'v/clip.mov' },
      x: 1,
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.reason).toBe('unknown_field');

    // A stream host that does not resolve is rejected.
    const live = await post({
      job_id: 'j-live',
      scene_code: 'ship',
      source: { type: 'stream', url: 'rtsp://192.0.2.1.nip.invalid/stream' },
    });
    expect(live.status).toBe(422); // unresolvable host is rejected
    const a = await post({
      job_id: 'j-1',
      scene_code: 'ship',
      source: { type: 'object', key: 'v/clip.mov' },
    });
    expect(a.status).toBe(201);
    expect(a.body.outcome).toBe('accepted');
    expect(a.body.job).toMatchObject({
      job_id: 'j-1',
      scene_code: 'ship',
      status: 'running',
      frames_published: 0,
    });
    const dup = await post({
      job_id: 'j-1',
      scene_code: 'ship',
      source: { type: 'object', key: 'v/clip.mov' },
    });
    expect(dup.status).toBe(200);
    expect(dup.body.outcome).toBe('duplicate');
    const over = await post({
      job_id: 'j-2',
      scene_code: 'ship',
      source: { type: 'object', key: 'v/clip.mov' },
    });
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ outcome: 'over_capacity' });

    const stopped = await request(app).post('/internal/v1/jobs/j-1/stop').use(auth());
    expect(stopped.status).toBe(200);
    expect(['stopped', 'failed', 'succeeded']).toContain(stopped.body.job.status);
    await svc.parts.jobs.waitFor('j-1');
    const one = await request(app).get('/internal/v1/jobs/j-1').use(auth());
    expect(one.status).toBe(200);
    expect(one.body.job.job_id).toBe('j-1');
    const many = await request(app).get('/internal/v1/jobs?ids=j-1,nope').use(auth());
    expect(many.body.jobs.map((j: { job_id: string }) => j.job_id)).toEqual(['j-1']);
    expect((await request(app).get('/internal/v1/jobs/nope').use(auth())).status).toBe(404);
    expect((await request(app).post('/internal/v1/jobs/nope/stop').use(auth())).status).toBe(404);

    // the slot is free again
    const b = await post({
      job_id: 'j-3',
      scene_code: 'ship',
      source: { type: 'object', key: 'v/clip.mov' },
    });
    expect(b.status).toBe(201);
    const end = await svc.collector.waitForEnd('j-3');
    expect(end.status).toBe('failed'); // a JPEG is not a video
  });
});
