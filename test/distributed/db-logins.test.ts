/**
 * Each service's own database login on the stack's real Postgres (scripts/distributed/db-logins.js, grants of
 * scripts/migrate.js): a login reaches its own schema only, and the owner login that ran the migrations is held by
 * no service. inference has one too: its replicas share their video jobs in its schema. Runs in process and
 * container mode.
 */
import { readFileSync } from 'node:fs';
import knexFactory, { type Knex } from 'knex';
import { ConfigError, openDb } from '@vision/shared';
import { migrations as imagesMigrations } from '../../services/images/src/index';
import type { ServiceName } from '../../scripts/distributed/launcher';
import type { DistributedStack } from '../helpers/distributed';
import { describeDistributed, startFaultStack } from './support';

type DbService = ServiceName;
const DB_SERVICES: DbService[] = ['gateway', 'tasks', 'quota', 'results', 'images', 'inference'];

/** The Postgres error code of a statement, or 'ok' when it succeeds. */
async function outcome(q: Promise<unknown>): Promise<string> {
  try {
    await q;
    return 'ok';
  } catch (err) {
    return String((err as { code?: unknown }).code ?? err);
  }
}

/** The environment a running replica's process was started with, read from /proc (host pid in container mode). */
function processEnv(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const kv of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const i = kv.indexOf('=');
    if (i > 0) out.set(kv.slice(0, i), kv.slice(i + 1));
  }
  return out;
}

describeDistributed('each service has its own database login', () => {
  let stack: DistributedStack;
  const logins = new Map<DbService | 'owner', Knex>();
  const as = (who: DbService | 'owner'): Knex => {
    let k = logins.get(who);
    if (!k) {
      k = knexFactory({
        client: 'pg',
        connection: stack.deployment.databaseUrl(who),
        pool: { min: 0, max: 1 },
      });
      logins.set(who, k);
    }
    return k;
  };

  beforeAll(async () => {
    stack = await startFaultStack();
  }, 300_000);
  afterAll(async () => {
    for (const k of logins.values()) await k.destroy();
    await stack?.close();
  });

  it("images' login can neither read nor write gateway.api_keys", async () => {
    const images = as('images');
    expect(await outcome(images.raw('select * from gateway.api_keys'))).toBe('42501');
    const row = {
      key_id: 'k_forged',
      subject: 'victim',
      key_hash: 'f'.repeat(64),
      source: 'cli',
      created_at: new Date(),
    };
    expect(await outcome(images.withSchema('gateway').table('api_keys').insert(row))).toBe('42501');
    expect(await outcome(images.raw('update gateway.api_keys set revoked_at = now()'))).toBe('42501');
    expect(await outcome(images.raw('delete from gateway.api_keys'))).toBe('42501');
    // The table is there, and no forged row reached it.
    const keys = await as('gateway').withSchema('gateway').table('api_keys').where({ key_id: 'k_forged' });
    expect(keys).toEqual([]);
  });

  it("images' login reads and writes its own tables", async () => {
    const images = as('images');
    const now = new Date();
    const row = {
      subject: 'db-logins',
      idempotency_key: 'own-schema',
      task_id: 'img_db_logins_own_schema',
      fingerprint: 'x',
      scene_code: 'person_vehicle',
      state: 'running',
      lease_until: now,
      image_count: 1,
      created_at: now,
    };
    await images.withSchema('images').table('image_calls').insert(row);
    const read = await images.withSchema('images').table('image_calls').where({ task_id: row.task_id });
    expect(read).toHaveLength(1);
    await images.withSchema('images').table('image_calls').where({ task_id: row.task_id }).delete();
  });

  it("inference's login reads and writes its video jobs; tasks' login can neither read nor forge one", async () => {
    const now = new Date();
    // An ended job: no replica of the stack takes it.
    const job = {
      job_id: 'db_logins_forged_job',
      request: JSON.stringify({ job_id: 'db_logins_forged_job' }),
      status: 'stopped',
      owner: null,
      epoch: 0,
      taken: false,
      given_at: now,
      started_at: now,
      ended_at: now,
    };
    const tasks = as('tasks');
    expect(await outcome(tasks.raw('select * from inference.jobs'))).toBe('42501');
    expect(await outcome(tasks.withSchema('inference').table('jobs').insert(job))).toBe('42501');
    expect(await outcome(tasks.raw('update inference.jobs set stop_requested = true'))).toBe('42501');
    const inference = as('inference');
    expect(await inference.withSchema('inference').table('jobs').where({ job_id: job.job_id })).toEqual([]);
    await inference.withSchema('inference').table('jobs').insert(job);
    const read = await inference.withSchema('inference').table('jobs').where({ job_id: job.job_id });
    expect(read).toHaveLength(1);
    await inference.withSchema('inference').table('jobs').where({ job_id: job.job_id }).delete();
  });

  it("no service login reaches another service's schema", async () => {
    const seen: string[] = [];
    for (const login of DB_SERVICES)
      for (const schema of DB_SERVICES) {
        const got = await outcome(as(login).raw('select name from ??.knex_migrations limit 1', [schema]));
        seen.push(`${login}->${schema}: ${got}`);
      }
    expect(seen).toEqual(
      DB_SERVICES.flatMap((login) =>
        DB_SERVICES.map((schema) => `${login}->${schema}: ${login === schema ? 'ok' : '42501'}`),
      ),
    );
  });

  it('a service login changes no schema: no DDL in its own, in public, nor a schema of its own', async () => {
    const images = as('images');
    expect(await outcome(images.raw('create table images.planted (a int)'))).toBe('42501');
    expect(await outcome(images.raw('create table public.planted (a int)'))).toBe('42501');
    expect(await outcome(images.raw('create schema planted'))).toBe('42501');
    expect(await outcome(images.raw('alter table images.image_calls add column planted int'))).toBe('42501');
    expect(await outcome(images.raw('drop table images.image_calls'))).toBe('42501');
    // Its migration records are read-only to it (the owner's record of what ran).
    expect(await outcome(images.raw('delete from images.knex_migrations'))).toBe('42501');
  });

  it("no service login connects to the server's other databases, postgres and template1", async () => {
    const seen: string[] = [];
    for (const login of DB_SERVICES)
      for (const database of ['postgres', 'template1']) {
        const url = new URL(stack.deployment.databaseUrl(login));
        url.pathname = `/${database}`;
        const k = knexFactory({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 1 } });
        try {
          seen.push(`${login}->${database}: ${await outcome(k.raw('select 1'))}`);
        } finally {
          await k.destroy();
        }
      }
    // 42501: permission denied for database (CONNECT revoked from PUBLIC, docs/KUBERNETES-LOGINS.md "Database logins").
    expect(seen).toEqual(
      DB_SERVICES.flatMap((login) => ['postgres', 'template1'].map((db) => `${login}->${db}: 42501`)),
    );
  });

  it("a service's login only checks its schema on start: it applies no migration, and refuses another schema", async () => {
    const cfg = {
      VISION_MODE: 'distributed' as const,
      DATABASE_URL: stack.deployment.databaseUrl('images'),
      VISION_DATA_DIR: '',
    };
    const pending = [...imagesMigrations, { name: '999_later', up: async () => undefined }];
    const refused = openDb(cfg, { schema: 'images', migrations: pending });
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    await expect(refused).rejects.toThrow(
      /migrations not applied \(999_later\), and this login may not apply them/,
    );
    await expect(openDb(cfg, { schema: 'gateway', migrations: [] })).rejects.toThrow(/may not use it/);
    const db = await openDb(cfg, { schema: 'images', migrations: imagesMigrations });
    await db.close();
  });

  it('each service process holds its own login, and none the owner login', async () => {
    const d = stack.deployment;
    const owner = new URL(d.databaseUrl('owner'));
    const ownerPassword = decodeURIComponent(owner.password);
    for (const p of Object.values(d.procs).flat()) {
      const env = processEnv(p.child!.pid!);
      const url = env.get('DATABASE_URL');
      expect({ service: p.name, user: url && new URL(url).username }).toEqual({
        service: p.name,
        user: `${d.database}_${p.name}`,
      });
      // Compared here, never printed: whether any value holds the owner's password.
      expect([...env.values()].some((v) => v.includes(ownerPassword))).toBe(false);
    }
  });
});
