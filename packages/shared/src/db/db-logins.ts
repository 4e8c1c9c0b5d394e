import knexFactory, { type Knex } from 'knex';
import { ConfigError } from '../config/config';
import type { Migration } from './port';

/**
 * Database logins in distributed mode (docs/SECURITY.md): an owner login runs the migrations (scripts/migrate.js)
 * and owns every service's schema; each service has its own login, which reaches its own schema only (use its
 * tables and sequences, nothing else: no DDL, no other schema, no CREATE in the database or in `public`).
 */

const ROLE_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/** The error code Postgres answers a statement the login has no privilege for. */
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * True when the connection's login may create schemas in its database (the owner's, or a single login for
 * every service): it brings a schema up to date itself. A service's own login may not, and only checks it.
 */
export async function mayCreateSchemas(knex: Knex): Promise<boolean> {
  const r = (await knex.raw("select has_database_privilege(current_database(), 'CREATE') as ok")) as {
    rows: { ok: boolean }[];
  };
  return r.rows[0]?.ok === true;
}

/**
 * Checks, with a service's own login, that the owner has applied every migration of `schema` (scripts/migrate.js):
 * the service cannot apply them itself. Migrations the schema has beyond these (a newer version's, during a rolling
 * upgrade) are accepted.
 */
export async function verifyMigrated(
  knex: Knex,
  schema: string,
  migrations: Migration[],
  table: string,
): Promise<void> {
  const hint = 'run scripts/migrate.js with the owner login first (docs/DEPLOYMENT.md)';
  let applied: string[];
  try {
    const present = (await knex.raw('select to_regclass(?) is not null as ok', [`"${schema}".${table}`])) as {
      rows: { ok: boolean }[];
    };
    if (!present.rows[0]?.ok)
      throw new ConfigError([
        `database schema ${schema}: not set up, and this login may not create it: ${hint}`,
      ]);
    applied = ((await knex.withSchema(schema).select('name').from(table)) as { name: string }[]).map(
      (r) => r.name,
    );
  } catch (err) {
    if ((err as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) throw err;
    throw new ConfigError([
      `database schema ${schema}: this login may not use it: name it in DATABASE_SERVICE_ROLES when you run scripts/migrate.js (docs/DEPLOYMENT.md)`,
    ]);
  }
  const missing = migrations.map((m) => m.name).filter((n) => !applied.includes(n));
  if (missing.length > 0)
    throw new ConfigError([
      `database schema ${schema}: migrations not applied (${missing.join(', ')}), and this login may not apply them: ${hint}`,
    ]);
}

/**
 * DATABASE_SERVICE_ROLES (`schema:role[,schema:role]`): each service's own login, which the migrations grant its
 * schema to. Every schema named must be one of `schemas`, every role distinct.
 */
export function parseServiceRoles(value: string | undefined, schemas: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const problems: string[] = [];
  for (const item of (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [schema = '', role = '', ...rest] = item.split(':').map((s) => s.trim());
    if (rest.length > 0 || !schemas.includes(schema) || !ROLE_RE.test(role))
      problems.push(
        `"${item}" is not <schema>:<role> with a schema of ${schemas.join(', ')} and a lower-case role name`,
      );
    else if (out[schema] !== undefined) problems.push(`${schema} is named twice`);
    else if (Object.values(out).includes(role)) problems.push(`role ${role} is named for two schemas`);
    else out[schema] = role;
  }
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `DATABASE_SERVICE_ROLES: ${p}`));
  return out;
}

/**
 * Refuses a service login that would hold more than its schema: the owner itself, a superuser, or a member of the
 * owner's role (which would inherit its privileges).
 */
async function checkServiceRole(knex: Knex, role: string): Promise<void> {
  const r = (await knex.raw(
    `select r.rolsuper as super, r.rolname = current_user as owner,
            pg_has_role(r.rolname, current_user, 'USAGE') as member
       from pg_roles r where r.rolname = ?`,
    [role],
  )) as { rows: { super: boolean; owner: boolean; member: boolean }[] };
  const row = r.rows[0];
  const problem = !row
    ? 'does not exist: create it first (docs/KUBERNETES-LOGINS.md)'
    : row.owner
      ? 'is the login running the migrations: a service needs a login of its own'
      : row.super
        ? 'is a superuser'
        : row.member
          ? "is a member of the migrations' login and would hold its privileges"
          : undefined;
  if (problem) throw new ConfigError([`DATABASE_SERVICE_ROLES: role ${role} ${problem}`]);
}

/**
 * Refuses grants that would join two releases on one Postgres server (docs/KUBERNETES-LOGINS.md, "Sharing a Postgres
 * server"). Roles are the server's, not a database's: each release has its own database and its own service logins.
 * So a service login must not be let into another database already (two releases naming the same roles), and no
 * role but the one this run grants may write a schema's tables (another release migrating into this database, or a
 * renamed role that still holds its old privileges). `roles`: schema -> role, as parseServiceRoles gives them.
 * Run with the owner login (`databaseUrl`) before any migration touches the database.
 */
export async function checkReleaseIsolation(
  databaseUrl: string,
  roles: Record<string, string>,
): Promise<void> {
  const knex = knexFactory({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } });
  try {
    await checkIsolation(knex, roles);
  } finally {
    await knex.destroy();
  }
}

async function checkIsolation(knex: Knex, roles: Record<string, string>): Promise<void> {
  const problems: string[] = [];
  const elsewhere = (await knex.raw(
    `select r.rolname as role, d.datname as db
       from pg_database d cross join lateral aclexplode(d.datacl) a join pg_roles r on r.oid = a.grantee
      where d.datname <> current_database() and a.privilege_type = 'CONNECT' and a.grantee <> d.datdba
        and r.rolname = any(string_to_array(?, ','))
      order by 1, 2`,
    [Object.values(roles).join(',')],
  )) as { rows: { role: string; db: string }[] };
  for (const { role, db } of elsewhere.rows)
    problems.push(
      `role ${role} may connect to database ${db} too: each release needs service logins of its own (docs/KUBERNETES-LOGINS.md, "Sharing a Postgres server")`,
    );
  const writers = (await knex.raw(
    `select distinct n.nspname as schema, r.rolname as role
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
            cross join lateral aclexplode(c.relacl) a join pg_roles r on r.oid = a.grantee
      where n.nspname = any(string_to_array(?, ',')) and a.privilege_type = 'INSERT' and a.grantee <> c.relowner
      order by 1, 2`,
    [Object.keys(roles).join(',')],
  )) as { rows: { schema: string; role: string }[] };
  for (const { schema, role } of writers.rows)
    if (role !== roles[schema])
      problems.push(
        `schema ${schema} is written by role ${role}, not ${roles[schema]}: another release uses this database, or ${role} is a former login of ${schema} (revoke its privileges there first; docs/KUBERNETES-LOGINS.md, "Sharing a Postgres server")`,
      );
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `DATABASE_SERVICE_ROLES: ${p}`));
}

/**
 * Grants one service's login its own schema (run by the owner after the schema's migrations): usage of the schema,
 * reading and writing its tables and sequences (also those later migrations create, through default privileges),
 * reading but not changing its migration records. Nothing else: no CREATE there, no other schema.
 */
export async function grantSchema(knex: Knex, schema: string, role: string, table: string): Promise<void> {
  await checkServiceRole(knex, role);
  const id = [schema, role];
  await knex.raw('grant usage on schema ?? to ??', id);
  await knex.raw('grant select, insert, update, delete on all tables in schema ?? to ??', id);
  await knex.raw('grant usage, select, update on all sequences in schema ?? to ??', id);
  await knex.raw(
    'alter default privileges in schema ?? grant select, insert, update, delete on tables to ??',
    id,
  );
  await knex.raw('alter default privileges in schema ?? grant usage, select, update on sequences to ??', id);
  for (const t of [table, `${table}_lock`])
    await knex.raw('revoke insert, update, delete, truncate on ?? from ??', [`${schema}.${t}`, role]);
}

/**
 * Restricts the database to its logins (run by its owner): only the given service logins (and the owner) may
 * connect, and no login but the owner may create in the `public` schema.
 */
export async function restrictDatabase(knex: Knex, roles: string[]): Promise<void> {
  const r = (await knex.raw('select current_database() as db')) as { rows: { db: string }[] };
  const db = r.rows[0]?.db ?? '';
  await knex.raw('revoke all on database ?? from public', [db]);
  for (const role of roles) await knex.raw('grant connect on database ?? to ??', [db, role]);
  await knex.raw('revoke create on schema public from public');
}
