/**
 * What a replica takes from the lease store (ownership/store/lease-store.ts), on the embedded database: every job
 * handed over to it, even past its room (the giver chose it by its room as of a beat; left for another, the job
 * would start there without the stream its receiver opened), and new jobs placed on it and orphans only up to its
 * room, counted after those.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, openDb, type Db } from '@vision/shared';
import { KnexLeaseStore, loadInferenceConfig, migrations, OWNERSHIP_SCHEMA } from '../src/index';
import type { JobCheckpoint } from '../src/index';
import type { JobRequest } from '../src/jobs/job-request';

const logger = createLogger('inference', { level: 'silent' });
const TTL_MS = 60_000;
const GIVEN_MS = 3000;
const checkpoint: JobCheckpoint = { nextSeq: 10, published: 10, dropped: 0, reconnects: 0 };
const request = (id: string): JobRequest => ({
  job_id: id,
  scene_code: 'person_vehicle',
  source: { type: 'stream', url: 'rtsp://camera.example/live' },
});

let dir: string;
let db: Db;
let store: KnexLeaseStore;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'lease-take-'));
  const cfg = loadInferenceConfig({ VISION_DATA_DIR: dir });
  db = await openDb(cfg, { schema: OWNERSHIP_SCHEMA, migrations, logger, memory: true });
  store = new KnexLeaseStore(db.knex);
  for (const id of ['giver', 'full', 'other'])
    await store.beat({ replicaId: id, url: `http://${id}`, capacity: 2, draining: false }, TTL_MS);
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A running job taken by `owner` (a replica without a lease: an orphan), then handed over to `to` if given. */
async function job(id: string, owner: string, to?: string): Promise<void> {
  expect((await store.insert(request(id), owner, true))?.epoch).toBe(1);
  if (to) expect(await store.release(id, owner, 1, checkpoint, to)).toBe(true);
}

const ids = (records: { jobId: string }[]) => records.map((r) => r.jobId).sort();

it('takes every job handed over to it whatever its room, and orphans only within it', async () => {
  await job('own-1', 'full');
  await job('own-2', 'full');
  await job('handed-1', 'giver', 'full');
  await job('handed-2', 'giver', 'full');
  await job('orphan-1', 'gone');

  // Full (two running, room 0): both handed jobs, no orphan.
  const first = await store.take('full', 0, GIVEN_MS);
  expect(ids(first.taken)).toEqual(['handed-1', 'handed-2']);
  expect(first.taken.every((r) => r.owner === 'full' && r.taken && r.epoch === 2)).toBe(true);
  expect(first.taken.every((r) => r.checkpoint?.nextSeq === 10)).toBe(true);

  // Room for one, one handed job: that one counts against the room, so still no orphan.
  await job('handed-3', 'giver', 'full');
  expect(ids((await store.take('full', 1, GIVEN_MS)).taken)).toEqual(['handed-3']);

  // A new job placed on it (no checkpoint yet) waits for room, like an orphan.
  expect(await store.insert(request('placed'), 'full', false)).toBeDefined();
  expect((await store.take('full', 0, GIVEN_MS)).taken).toEqual([]);
  expect(ids((await store.take('full', 1, GIVEN_MS)).taken)).toEqual(['placed']);

  // Room for one and nothing handed over: the orphan.
  expect(ids((await store.take('other', 1, GIVEN_MS)).taken)).toEqual(['orphan-1']);
  // A job handed over to one replica is not another's before GIVEN_MS.
  await job('handed-4', 'giver', 'full');
  expect((await store.take('other', 5, GIVEN_MS)).taken).toEqual([]);
  expect(ids((await store.take('full', 0, GIVEN_MS)).taken)).toEqual(['handed-4']);
});
