/**
 * A replica whose lease runs out while the lease store is unreachable (a Postgres restart, a partition) fences its
 * jobs at once; once the store answers again, a job nobody else took meanwhile runs again on it, once, from where it
 * was fenced: every seq is kept once, and a stop asked meanwhile reaches it.
 */
import { createLogger } from '@vision/shared';
import { createInference, loadInferenceConfig } from '../src/index';
import type { InferenceParts } from '../src/index';
import { identityDir } from '../../../test/helpers/identity';
import { until } from '../../../test/helpers/webhooks';
import { FrameCollector, MODELS_DIR } from './support/helpers';
import { ownershipFixture, type OwnershipFixture } from './support/ownership-fixture';
import { partitionable } from './support/partitionable-db';

jest.setTimeout(120_000);

const LONG = 'pedestrians_vtest_opencv.mp4';
const logger = createLogger('inference', { level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let f: OwnershipFixture;
let collector: FrameCollector;
let replica: InferenceParts | undefined;

beforeAll(async () => {
  f = await ownershipFixture('lease-lapse-', logger, [LONG]);
  collector = await FrameCollector.on(f.bus);
});

afterAll(async () => {
  await replica?.close().catch(() => undefined);
  await collector?.close();
  await f?.close();
});

it('runs a job fenced at a lapse again once the store answers: taken once, every seq kept once, its stop obeyed', async () => {
  const link = partitionable(f.db);
  const cfg = loadInferenceConfig({
    VISION_MODELS_DIR: MODELS_DIR,
    VISION_IDENTITY_DIR: identityDir(),
    VISION_DATA_DIR: f.dir,
    LOG_LEVEL: 'silent',
    INFERENCE_MAX_JOBS: '1',
    INFERENCE_LEASE_TTL_MS: '1000',
    INFERENCE_LEASE_BEAT_MS: '200',
    INFERENCE_TAKE_INTERVAL_MS: '200',
    INFERENCE_REBALANCE: 'false',
  });
  const a = await createInference({ cfg, bus: f.bus, objectStore: f.store, logger, db: link.db });
  replica = a;
  await a.owner?.start('http://127.0.0.1:30');
  const job = { job_id: 'lapsed', scene_code: 'person_vehicle' as const, sample_fps: 2 };
  await a.owned?.submit({ ...job, source: { type: 'object', key: LONG } });
  await collector.waitFor(() => collector.frames('lapsed').length >= 4, 60_000, 'frames before the cut');

  // The store is unreachable for longer than the lease: the job is fenced here, and its lease runs out there too.
  link.cut();
  await until('the job fenced', () => (a.jobs.runningIds().length === 0 ? true : undefined), 10_000);
  // A frame handed to the bus just before the fence may still be on its way to the collector.
  await sleep(500);
  const fencedAt = collector.frames('lapsed').length;
  await sleep(1500);
  expect(collector.frames('lapsed').length).toBe(fencedAt);

  link.heal();
  await until('the job running again', () => (a.jobs.runningIds().length === 1 ? true : undefined), 20_000);
  await collector.waitFor(
    () => collector.frames('lapsed').some((f) => f.epoch === 2),
    60_000,
    'frames of the second run',
  );
  // Many takes later it was still taken once: one run, at epoch 2.
  await sleep(1500);
  expect(collector.owners('lapsed')).toEqual([1, 2]);
  expect(a.jobs.runningIds()).toEqual(['lapsed']);
  const [record] = await f.db.knex('jobs').where({ job_id: 'lapsed' });
  expect(Number((record as { epoch: number }).epoch)).toBe(2);

  // A stop asked of the store while nobody answers for the job here reaches its run.
  expect(await a.owned?.requestStop('lapsed')).toBeDefined();
  const end = await collector.waitForEnd('lapsed', 30_000);
  expect(end).toMatchObject({ status: 'stopped', epoch: 2 });
  // Every seq up to the end is kept once, in capture order, and nothing is published after the end.
  const kept = [...collector.kept('lapsed').values()].sort((x, y) => x.seq - y.seq);
  expect(kept.map((f) => f.seq)).toEqual(kept.map((_, i) => i));
  expect(kept.length).toBe(end.frames);
  const times = kept.map((f) => f.frame_time_ms);
  expect([...times].sort((x, y) => x - y)).toEqual(times);
  const sent = collector.messages('lapsed').length;
  await sleep(1000);
  expect(collector.messages('lapsed').length).toBe(sent);
});
