'use strict';
/**
 * The database logins of a deployment (launcher.js) on the stack's Postgres, where many deployments share one
 * server and roles are the server's, not a database's: each deployment's database `vision_<id>` gets roles of its
 * own, `<database>_owner` (owns the database; runs scripts/migrate.js, held by no service) and `<database>_<service>`
 * for each service with a schema (its DATABASE_URL; migrate.js grants it its schema only, DATABASE_SERVICE_ROLES).
 * Each has a random password. Dropped with the database.
 */
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { Client: PgClient } = require('pg');
const { REPO } = require('./stack-servers');

/**
 * The services that keep tables (each its own schema of the same name); inference keeps its video jobs, their owners
 * and checkpoints (INFERENCE_JOB_STORE=database), shared by its replicas.
 */
const DB_SERVICES = ['gateway', 'tasks', 'quota', 'results', 'images', 'inference'];

/** Runs `fn` with a client of the server's `postgres` database, as the stack's superuser. */
async function asSuperuser(pgUrl, fn) {
  const client = new PgClient({ connectionString: `${pgUrl}/postgres` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const roleNames = (database) => ['owner', ...DB_SERVICES].map((who) => `${database}_${who}`);

/**
 * Creates database `database` owned by a new owner role, and a login role per service. Resolves with each login,
 * `{ owner: { user, password }, gateway: {...}, ... }`.
 */
async function createDeploymentDatabase(pgUrl, database) {
  const logins = {};
  await asSuperuser(pgUrl, async (client) => {
    for (const who of ['owner', ...DB_SERVICES]) {
      const login = { user: `${database}_${who}`, password: randomBytes(18).toString('base64url') };
      await client.query(
        `create role ${client.escapeIdentifier(login.user)} login password ${client.escapeLiteral(login.password)}`,
      );
      logins[who] = login;
    }
    await client.query(
      `create database ${client.escapeIdentifier(database)} owner ${client.escapeIdentifier(logins.owner.user)}`,
    );
    // As an operator does once per server (docs/KUBERNETES-LOGINS.md, "Database logins"): no login but the superuser
    // connects to the server's own databases.
    await client.query('revoke connect on database postgres from public');
    await client.query('revoke connect on database template1 from public');
  });
  return logins;
}

/** Drops the database (its connections ended first) and its roles. */
async function dropDeploymentDatabase(pgUrl, database) {
  await asSuperuser(pgUrl, async (client) => {
    await client.query(`drop database if exists ${client.escapeIdentifier(database)} with (force)`);
    for (const role of roleNames(database))
      await client.query(`drop role if exists ${client.escapeIdentifier(role)}`);
  });
}

/** The URL of `database` at `serverUrl` (scheme, host and port of the server) with a login's user and password. */
function loginUrl(serverUrl, database, login) {
  const u = new URL(serverUrl);
  u.username = encodeURIComponent(login.user);
  u.password = encodeURIComponent(login.password);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * Runs scripts/migrate.js of deployment `d` (in a container of its image in container mode) with the services'
 * environment, the owner login as DATABASE_URL and DATABASE_SERVICE_ROLES (`schema:role,...`) granting each
 * service's schema to its own login.
 */
function migrateDeployment(d) {
  const env = {
    ...d.env,
    DATABASE_URL: d.databaseUrl('owner'),
    DATABASE_SERVICE_ROLES: DB_SERVICES.map((s) => `${s}:${d.dbLogins[s].user}`).join(','),
  };
  if (d.containers) return d.containers.migrate(env);
  return d.run(process.execPath, [path.join(REPO, 'scripts/migrate.js')], env, 'migrate');
}

module.exports = {
  DB_SERVICES,
  createDeploymentDatabase,
  dropDeploymentDatabase,
  loginUrl,
  migrateDeployment,
};
