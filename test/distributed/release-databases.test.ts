/**
 * Two releases side by side on the stack's real Postgres server (docs/KUBERNETES-LOGINS.md, "Sharing a Postgres server"):
 * each has its own database and its own logins, migrated by scripts/migrate.js as the chart's migration Job runs it
 * (the owner login, DATABASE_SERVICE_ROLES). Neither release's logins reach the other's database or rows, and a
 * migration that would let one release's logins into another's database, or another release's logins into this
 * one's schemas, is refused before it changes anything.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { readStackEnv } from '../../scripts/distributed/launcher';
import { describeDistributed } from './support';

jest.setTimeout(300_000);

// Every schema with a login of its own (inference: the video jobs its replicas share).
const DB_SERVICES = ['gateway', 'tasks', 'quota', 'results', 'images', 'inference'] as const;
type DbService = (typeof DB_SERVICES)[number];
type Login = { user: string; password: string };

/** The Postgres error code of a statement, or 'ok' when it succeeds. */
async function outcome(q: () => Promise<unknown>): Promise<string> {
  try {
    await q();
    return 'ok';
  } catch (err) {
    return String((err as { code?: unknown }).code ?? err);
  }
}

describeDistributed('two releases on one Postgres server', () => {
  const { pgUrl } = readStackEnv();
  const run = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const superuser = knexFactory({ client: 'pg', connection: `${pgUrl}/postgres`, pool: { min: 0, max: 1 } });
  const databases: string[] = [];
  const roles: string[] = [];
  const clients: Knex[] = [];

  /** A login role of its own (random password). */
  async function role(name: string): Promise<Login> {
    const login = { user: name, password: randomBytes(18).toString('base64url') };
    await superuser.raw(`create role ?? login password '${login.password}'`, [name]);
    roles.push(name);
    return login;
  }
  /** A service login for each schema, named `<name>_<service>`. */
  async function serviceLogins(name: string): Promise<Record<DbService, Login>> {
    const out = {} as Record<DbService, Login>;
    for (const s of DB_SERVICES) out[s] = await role(`${name}_${s}`);
    return out;
  }
  /** A database of its own owner (who runs its migrations). */
  async function database(name: string): Promise<Login> {
    const owner = await role(`${name}_owner`);
    await superuser.raw('create database ?? owner ??', [name, owner.user]);
    databases.push(name);
    return owner;
  }
  const url = (db: string, login: Login) => {
    const u = new URL(pgUrl);
    u.username = encodeURIComponent(login.user);
    u.password = encodeURIComponent(login.password);
    u.pathname = `/${db}`;
    return u.toString();
  };
  const as = (db: string, login: Login) => {
    const k = knexFactory({ client: 'pg', connection: url(db, login), pool: { min: 0, max: 1 } });
    clients.push(k);
    return k;
  };
  /** scripts/migrate.js as the migration Job runs it: the owner login, each schema granted to its login. */
  function migrate(db: string, owner: Login, logins: Record<DbService, Login>) {
    const r = spawnSync(process.execPath, [path.join(__dirname, '../../scripts/migrate.js')], {
      env: {
        PATH: process.env.PATH ?? '',
        VISION_MODE: 'distributed',
        LOG_LEVEL: 'warn',
        VISION_DATA_DIR: '/tmp/vision-release-databases',
        DATABASE_URL: url(db, owner),
        DATABASE_SERVICE_ROLES: DB_SERVICES.map((s) => `${s}:${logins[s].user}`).join(','),
      },
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  }

  const staging = {
    db: `rel_staging_${run}`,
    owner: undefined as unknown as Login,
    logins: {} as Record<DbService, Login>,
  };
  const prod = {
    db: `rel_prod_${run}`,
    owner: undefined as unknown as Login,
    logins: {} as Record<DbService, Login>,
  };

  beforeAll(async () => {
    for (const r of [staging, prod]) {
      r.owner = await database(r.db);
      r.logins = await serviceLogins(r.db);
    }
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((k) => k.destroy()));
    for (const db of databases) await superuser.raw('drop database if exists ?? with (force)', [db]);
    for (const r of roles) await superuser.raw('drop role if exists ??', [r]);
    await superuser.destroy();
  });

  it('each release migrates its own database, granting its own logins', () => {
    for (const r of [staging, prod]) {
      const got = migrate(r.db, r.owner, r.logins);
      expect(got).toMatchObject({ status: 0 });
      expect(got.out).toContain(`tasks: up to date, granted to ${r.db}_tasks`);
    }
  });

  it("neither release's logins reach the other's database or rows", async () => {
    const seen: string[] = [];
    const expected: string[] = [];
    for (const [mine, theirs] of [
      [staging, prod],
      [prod, staging],
    ])
      for (const s of DB_SERVICES) {
        const probe = `select count(*) from ${s}.knex_migrations`;
        seen.push(
          `${mine.db}_${s} in ${theirs.db}: ${await outcome(() => as(theirs.db, mine.logins[s]).raw(probe))}`,
        );
        expected.push(`${mine.db}_${s} in ${theirs.db}: 42501`);
        seen.push(
          `${mine.db}_${s} in its own: ${await outcome(() => as(mine.db, mine.logins[s]).raw(probe))}`,
        );
        expected.push(`${mine.db}_${s} in its own: ok`);
      }
    expect(seen).toEqual(expected);
    // A row one release writes is in its database alone.
    const row = {
      key_id: `k_${run}`,
      subject: 'staging',
      key_hash: 'a'.repeat(64),
      source: 'cli',
      created_at: new Date(),
    };
    await as(staging.db, staging.logins.gateway).withSchema('gateway').table('api_keys').insert(row);
    const inProd = await as(prod.db, prod.logins.gateway)
      .withSchema('gateway')
      .table('api_keys')
      .where({ key_id: row.key_id });
    expect(inProd).toEqual([]);
  });

  it("a release that names another release's logins is refused, and they gain nothing", async () => {
    const db = `rel_third_${run}`;
    const owner = await database(db);
    const got = migrate(db, owner, staging.logins);
    expect(got.status).toBe(2);
    expect(got.out).toContain(`role ${staging.db}_tasks may connect to database ${staging.db} too`);
    // Nothing was migrated or granted there: staging's login finds no schema of its own in that database.
    const schemas = await as(db, owner).raw("select nspname from pg_namespace where nspname = 'tasks'");
    expect(schemas.rows).toEqual([]);
    expect(
      await outcome(() => as(db, staging.logins.tasks).raw('select count(*) from tasks.knex_migrations')),
    ).toBe('42P01');
  });

  it("a second release migrating into a release's database is refused, and its logins gain nothing", async () => {
    const other = await serviceLogins(`rel_other_${run}`);
    const got = migrate(staging.db, staging.owner, other);
    expect(got.status).toBe(2);
    expect(got.out).toContain(
      `schema tasks is written by role ${staging.db}_tasks, not rel_other_${run}_tasks`,
    );
    expect(await outcome(() => as(staging.db, other.tasks).raw('select 1'))).toBe('42501');
    // The release's own logins keep their schemas: its migration runs again as before.
    expect(migrate(staging.db, staging.owner, staging.logins)).toMatchObject({ status: 0 });
  });
});
