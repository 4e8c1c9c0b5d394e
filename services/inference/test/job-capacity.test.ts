/**
 * The capacity of job-running replicas that share one lease store (ownership/): a new job goes to a replica with
 * room wherever it is submitted, `over_capacity` comes only once every live replica is full, and the capacity
 * that tasks shares between subjects is the sum over the live replicas, shrinking as one leaves.
 */
import { createLogger } from '@vision/shared';
import { createInference, loadInferenceConfig } from '../src/index';
import type { InferenceParts } from '../src/index';
import { identityDir } from '../../../test/helpers/identity';
import { until } from '../../../test/helpers/webhooks';
import { MODELS_DIR } from './support/helpers';
import { ownershipFixture, type OwnershipFixture } from './support/ownership-fixture';

jest.setTimeout(120_000);

const LONG = 'pedestrians_vtest_opencv.mp4';
const logger = createLogger('inference', { level: 'silent' });

let f: OwnershipFixture;
const replicas: InferenceParts[] = [];

/** A replica of one job slot, beating every 200 ms. */
async function replica(n: number): Promise<InferenceParts> {
  const cfg = loadInferenceConfig({
    VISION_MODELS_DIR: MODELS_DIR,
    VISION_IDENTITY_DIR: identityDir(),
    VISION_DATA_DIR: f.dir,
    LOG_LEVEL: 'silent',
    INFERENCE_MAX_JOBS: '1',
    INFERENCE_LEASE_TTL_MS: '3000',
    INFERENCE_LEASE_BEAT_MS: '200',
    INFERENCE_TAKE_INTERVAL_MS: '200',
    INFERENCE_REBALANCE: 'false',
  });
  const parts = await createInference({ cfg, bus: f.bus, objectStore: f.store, logger, db: f.db });
  await parts.owner?.start(`http://127.0.0.1:${20 + n}`);
  replicas.push(parts);
  return parts;
}

/** A long file at a frame a second: it runs for the whole case. */
const submit = (on: InferenceParts, id: string) =>
  on.owned?.submit({
    job_id: id,
    scene_code: 'person_vehicle',
    source: { type: 'object', key: LONG },
    sample_fps: 1,
  });

beforeAll(async () => {
  f = await ownershipFixture('job-capacity-', logger, [LONG]);
});

afterAll(async () => {
  await Promise.all(replicas.splice(0).map((r) => r.close().catch(() => undefined)));
  await f?.close();
});

it('places a job on a replica with room, answers over_capacity only when all are full, and shares their sum', async () => {
  const a = await replica(0);
  const b = await replica(1);
  // Each has seen the other at a beat.
  await until('both replicas in each one’s loads', () =>
    a.owner?.replicas().length === 2 && b.owner?.replicas().length === 2 ? true : undefined,
  );
  expect(await a.owned?.capacity()).toEqual({ slots: 2, running: 0, replicas: 2 });

  // Both submitted to a: the first runs there, the second goes to b, which has room.
  expect((await submit(a, 'first'))?.outcome).toBe('accepted');
  expect(a.jobs.runningIds()).toEqual(['first']);
  expect((await submit(a, 'second'))?.outcome).toBe('accepted');
  await until('b to take the second job', () => (b.jobs.runningIds().includes('second') ? true : undefined));
  expect(a.jobs.runningIds()).toEqual(['first']);

  // Every replica full, wherever the third is sent: over_capacity, and nothing stored for it.
  await until('a beat of each counting its job', async () => {
    const c = await b.owned?.capacity();
    return c?.running === 2 ? c : undefined;
  });
  expect(await submit(b, 'third')).toEqual({ outcome: 'over_capacity' });
  expect(await submit(a, 'third')).toEqual({ outcome: 'over_capacity' });
  expect(await a.owned?.get('third')).toBeUndefined();
  expect(await a.owned?.capacity()).toEqual({ slots: 2, running: 2, replicas: 2 });

  // b stops: the capacity shared is a's alone, and b's job waits for room (it is not lost, and a stays full).
  await b.close();
  replicas.splice(replicas.indexOf(b), 1);
  const after = await until('b to have left', async () => {
    const c = await a.owned?.capacity();
    return c?.replicas === 1 ? c : undefined;
  });
  expect(after.slots).toBe(1);
  expect((await a.owned?.get('second'))?.status).toBe('running');
  expect(a.jobs.runningIds()).toEqual(['first']);
});
