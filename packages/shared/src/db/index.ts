/**
 * The database: its port (port.ts) and the adapters behind it: knex over Postgres or PGlite (db.ts), the PGlite
 * loader, its statements kept prepared, and the one PGlite a standalone process shares (pglite-loader.ts,
 * pglite-prepared.ts, pglite-shared.ts), the upgrade of old
 * standalone data (pglite-upgrade.ts), each service's own login and schema (db-logins.ts), and the wait for
 * Postgres at start (db-wait.ts).
 */
export * from './port';
export * from './db';
export { PreparedStatements } from './pglite-prepared';
export { checkReleaseIsolation, grantSchema, parseServiceRoles, restrictDatabase } from './db-logins';
