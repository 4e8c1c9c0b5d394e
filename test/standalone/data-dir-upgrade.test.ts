/**
 * A standalone data directory of the earlier layout, one PGlite database per service under `pg/<schema>`, is
 * upgraded in place on the next start (docs/STANDALONE.md): each service's database is moved into the one
 * database `pg/vision` and renamed `pg/<schema>.merged`. Real data made through the public API (the
 * development key, an image call and its quota charge, a video task from an uploaded clip and its result
 * frames) is turned into that layout with the primitives the earlier version used: a PGlite database of its
 * own for each schema, the schema created by the service's own migrations, and every table's rows and every
 * sequence's position copied in (copySchema, as the upgrade copies them). The next start reads all of it the
 * same and goes on charging from there.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { pgliteDataDir, sharedPgliteDataDir, type Migration } from '@vision/shared';
import { keyMigrations } from '@vision/gateway';
import { migrations as tasksMigrations } from '@vision/tasks';
import { migrations as quotaMigrations } from '@vision/quota';
import { migrations as resultsMigrations } from '@vision/results';
import { migrations as imagesMigrations } from '@vision/images';
import { createPGlite, type PGliteLike } from '../../packages/shared/src/db/pglite-loader';
import { sharedPGliteKnex } from '../../packages/shared/src/db/pglite-shared';
import { copySchema } from '../../packages/shared/src/db/pglite-upgrade';
import { waitFor } from '../helpers/media-server';
import { MEDIA, settledQuota, startStandaloneStack, type TestStack } from '../helpers/stack';
import { detectImage, uploadVideoTask } from '../helpers/uploads';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

/** Every service's schema and its own migrations, as each service opens its database with them. */
const SCHEMAS: Record<string, Migration[]> = {
  gateway: keyMigrations,
  tasks: tasksMigrations,
  quota: quotaMigrations,
  results: resultsMigrations,
  images: imagesMigrations,
};
const NAMES = Object.keys(SCHEMAS).sort();
/** Schemas newer than the earlier layout: that version never wrote them, the next start creates them. */
const NEWER = ['inference'];

// A 3.4 s clip sampled at 1 frame a second: a handful of result frames.
const CLIP = path.join(MEDIA, 'videos', 'person_bicycle_car_parkinglot_intel.mp4');
const IMAGE = path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg');
const ENV = {
  INFERENCE_SAMPLE_FPS: '1',
  TASKS_POLL_INTERVAL_MS: '200',
  IMAGES_QUOTA_LEASE_IDLE_MS: '100',
};

/** The user schemas of a database (public and the system schemas left out). */
async function userSchemas(pg: PGliteLike): Promise<string[]> {
  const r = (await pg.query(
    `select schema_name from information_schema.schemata
      where schema_name <> 'public' and schema_name <> 'information_schema' and schema_name not like 'pg\\_%'
      order by schema_name`,
  )) as { rows: { schema_name: string }[] };
  return r.rows.map((row) => row.schema_name);
}

/** The names in a schema's knex_migrations table, in the order they ran. */
async function migrationNames(pg: PGliteLike, schema: string): Promise<string[]> {
  const r = (await pg.query(`select name from "${schema}".knex_migrations order by id`)) as {
    rows: { name: string }[];
  };
  return r.rows.map((row) => row.name);
}

/**
 * Writes `pg/<schema>` as the earlier version left it: a PGlite database of its own holding only `schema`,
 * created by the service's migrations through knex's migrator, with the rows and sequences `shared` holds.
 */
async function writeEarlierDb(root: string, shared: PGliteLike, schema: string): Promise<void> {
  // A knex over a PGlite database of its own at pg/<schema> (createPGlite; its files made in a child process).
  const knex = sharedPGliteKnex(pgliteDataDir(root, schema), schema);
  try {
    await knex.raw('create schema ??', [schema]);
    await knex.migrate.latest({
      schemaName: schema,
      tableName: 'knex_migrations',
      migrationSource: {
        getMigrations: async () => [...SCHEMAS[schema]].sort((a, b) => a.name.localeCompare(b.name)),
        getMigrationName: (m: Migration) => m.name,
        getMigration: async (m: Migration) => ({ up: (k: Knex) => m.up(k), down: async () => undefined }),
      },
    });
    const client = knex.client as {
      acquireConnection(): Promise<PGliteLike>;
      releaseConnection(c: PGliteLike): Promise<void>;
    };
    const legacy = await client.acquireConnection();
    try {
      await copySchema(shared, legacy, schema);
      expect(await userSchemas(legacy)).toEqual([schema]);
      expect(await migrationNames(legacy, schema)).toEqual(await migrationNames(shared, schema));
    } finally {
      await client.releaseConnection(legacy);
    }
  } finally {
    await knex.destroy();
  }
}

interface Frame {
  frame_id: string;
  frame_time_ms: number;
}

describe('a standalone data directory of the earlier layout, one database per service', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-upgrade-'));
  const pgDir = path.join(dataDir, 'pg');
  let stack: TestStack | undefined;
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async () => (stack = await startStandaloneStack({ dataDir, env: ENV }));
  const stop = async () => {
    await stack?.close();
    stack = undefined;
  };

  /** Everything the public API tells of the data made below. */
  const read = async (s: TestStack, key: string, video: string, image: string) => {
    const frames = await s.api('GET', `/v1/vision/tasks/${video}/results?limit=500`, { key });
    expect(frames.status).toBe(200);
    expect(frames.body.next_cursor).toBe('');
    const history = await s.api('GET', '/v1/vision/tasks', { key });
    expect(history.status).toBe(200);
    return {
      video: (await s.api('GET', `/v1/vision/tasks/${video}`, { key })).body,
      image: (await s.api('GET', `/v1/vision/tasks/${image}`, { key })).body,
      frames: frames.body.items as Frame[],
      history: history.body,
      quota: await settledQuota(s, key),
    };
  };

  let key = '';
  let video = '';
  let image = '';
  let before: Awaited<ReturnType<typeof read>>;

  it('makes real data on a fresh data directory: a key, an image call, a video task with frames', async () => {
    const s = await start();
    key = s.standalone!.gateway.devKey!.key;
    image = (await detectImage(s, key, IMAGE, { filename: 'street.jpg', scene: 'person_vehicle' })).body
      .task_id;
    video = await uploadVideoTask(s, key, CLIP);
    await waitFor(
      `task ${video} to succeed`,
      async () => {
        const r = await s.api('GET', `/v1/vision/tasks/${video}`, { key });
        if (r.body.status === 'failed') throw new Error(`the task failed: ${JSON.stringify(r.body)}`);
        return r.body.status === 'succeeded' ? true : undefined;
      },
      60_000,
    );
    // The image call's record has reached the tasks store, its history lists both.
    await waitFor('both tasks in the history', async () => {
      const r = await s.api('GET', '/v1/vision/tasks', { key });
      const ids = (r.body.items as { task_id: string }[]).map((t) => t.task_id);
      return ids.includes(video) && ids.includes(image) ? true : undefined;
    });
    before = await read(s, key, video, image);
    expect(before.video.status).toBe('succeeded');
    expect(before.image).toMatchObject({ kind: 'image', status: 'succeeded' });
    expect(before.frames.length).toBeGreaterThanOrEqual(3);
    expect(before.quota.images.used).toBe(1);
    expect(before.quota.video_tasks.used).toBe(1);
    await stop();
  }, 120_000);

  it('turns it into the earlier layout: pg/<schema> for each service, no pg/vision', async () => {
    expect(before).toBeDefined();
    const shared = createPGlite(sharedPgliteDataDir(dataDir));
    try {
      await shared.waitReady;
      // Every schema the stack wrote is one of the services' (a new one would be left out of the layout).
      expect(await userSchemas(shared)).toEqual([...NAMES, ...NEWER].sort());
      for (const schema of NAMES) await writeEarlierDb(dataDir, shared, schema);
    } finally {
      await shared.close();
    }
    rmSync(sharedPgliteDataDir(dataDir), { recursive: true, force: true });
    expect(readdirSync(pgDir).sort()).toEqual(NAMES);
    for (const schema of NAMES)
      expect(existsSync(path.join(pgliteDataDir(dataDir, schema), 'PG_VERSION'))).toBe(true);
  }, 120_000);

  it('starts on it with the same key, tasks, frames and quota, and goes on charging', async () => {
    expect(readdirSync(pgDir).sort()).toEqual(NAMES);
    const s = await start();
    // The stored key was moved: no new development key, and the old one authenticates.
    expect(s.standalone!.gateway.devKey).toBeUndefined();
    const after = await read(s, key, video, image);
    expect(after).toEqual(before);
    expect(readdirSync(pgDir).sort()).toEqual([...NAMES.map((n) => `${n}.merged`), 'vision'].sort());

    await detectImage(s, key, IMAGE, { filename: 'street.jpg', scene: 'person_vehicle' });
    const quota = await settledQuota(s, key);
    expect(quota.images.used).toBe(before.quota.images.used + 1);
    expect(quota.video_tasks.used).toBe(before.quota.video_tasks.used);
    await stop();
  }, 120_000);
});
