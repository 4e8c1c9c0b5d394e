import {
  ConfigError,
  MIGRATIONS_TABLE,
  checkReleaseIsolation,
  commonShape,
  createLogger,
  env,
  grantSchema,
  loadConfig,
  openDb,
  parseServiceRoles,
  restrictDatabase,
  type Migration,
} from '@vision/shared';
import { keyMigrations } from '@vision/gateway';
import { migrations as tasksMigrations } from '@vision/tasks';
import { migrations as quotaMigrations } from '@vision/quota';
import { migrations as resultsMigrations } from '@vision/results';
import { migrations as imagesMigrations } from '@vision/images';
import { migrations as inferenceMigrations } from '@vision/inference';

/** Every service's schema and migrations. A login that may create schemas also migrates on start; a service's own login only checks them. */
export const SCHEMAS: Record<string, Migration[]> = {
  gateway: keyMigrations,
  tasks: tasksMigrations,
  quota: quotaMigrations,
  results: resultsMigrations,
  images: imagesMigrations,
  // The video jobs shared by the job-running inference replicas (their owners, leases and checkpoints).
  inference: inferenceMigrations,
};

const migrateShape = {
  ...commonShape,
  /**
   * Each service's own database login, `schema:role[,schema:role]` (db-logins.ts): the migrations grant the role its
   * schema, and only these roles (and the owner running the migrations) may connect to the database. Unset: no
   * grants (one login for every service, the weaker mode of docs/SECURITY.md).
   */
  DATABASE_SERVICE_ROLES: env.str(''),
};

/**
 * `node apps/standalone/dist/migrate.js [schema...]`: brings the given schemas (default: all) up
 * to date, grants each its service's login (DATABASE_SERVICE_ROLES), and exits; used by the Helm
 * pre-install/pre-upgrade Job, the compose init service and the distributed launcher, with the owner login.
 */
export async function runMigrations(names: string[]): Promise<void> {
  const cfg = loadConfig(migrateShape);
  const logger = createLogger('migrate', { level: cfg.LOG_LEVEL });
  const roles = parseServiceRoles(cfg.DATABASE_SERVICE_ROLES, Object.keys(SCHEMAS));
  const granting = Object.keys(roles).length > 0;
  if (granting && cfg.VISION_MODE !== 'distributed')
    throw new ConfigError([
      'DATABASE_SERVICE_ROLES: only in distributed mode (standalone has one embedded database)',
    ]);
  // Before any migration: the database and logins of another release are left as they are.
  if (granting && cfg.DATABASE_URL) await checkReleaseIsolation(cfg.DATABASE_URL, roles);
  const wanted = names.length ? names : Object.keys(SCHEMAS);
  for (const [i, schema] of wanted.entries()) {
    const migrations = SCHEMAS[schema];
    if (!migrations) throw new Error(`unknown schema ${schema}; known: ${Object.keys(SCHEMAS).join(', ')}`);
    const db = await openDb(cfg, { schema, migrations, logger });
    try {
      if (granting && i === 0) await restrictDatabase(db.knex, Object.values(roles));
      const role = roles[schema];
      if (role) await grantSchema(db.knex, schema, role, MIGRATIONS_TABLE);
    } finally {
      await db.close();
    }
    process.stdout.write(`${schema}: up to date${roles[schema] ? `, granted to ${roles[schema]}` : ''}\n`);
  }
}

/** Process entry: runs the migrations named on the command line and exits with a status. */
export function migrateMain(argv: string[]): void {
  runMigrations(argv).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`migration failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof ConfigError ? 2 : 1);
    },
  );
}

if (require.main === module) migrateMain(process.argv.slice(2));
