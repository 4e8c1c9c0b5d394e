import { ConfigError, commonShape, createLogger, loadConfig, openDb, type Migration } from '@vision/shared';
import { keyMigrations } from '@vision/gateway';
import { migrations as tasksMigrations } from '@vision/tasks';
import { migrations as quotaMigrations } from '@vision/quota';
import { migrations as resultsMigrations } from '@vision/results';
import { migrations as imagesMigrations } from '@vision/images';

/** Every service's schema and migrations. Services also migrate on start; this runs them up front. */
export const SCHEMAS: Record<string, Migration[]> = {
  gateway: keyMigrations,
  tasks: tasksMigrations,
  quota: quotaMigrations,
  results: resultsMigrations,
  images: imagesMigrations,
};

/**
 * `node apps/standalone/dist/migrate.js [schema...]`: brings the given schemas (default: all) up
 * to date and exits; used by the Helm pre-install/pre-upgrade Job and the compose init service.
 */
export async function runMigrations(names: string[]): Promise<void> {
  const cfg = loadConfig(commonShape);
  const logger = createLogger('migrate', { level: cfg.LOG_LEVEL });
  const wanted = names.length ? names : Object.keys(SCHEMAS);
  for (const schema of wanted) {
    const migrations = SCHEMAS[schema];
    if (!migrations) throw new Error(`unknown schema ${schema}; known: ${Object.keys(SCHEMAS).join(', ')}`);
    const db = await openDb(cfg, { schema, migrations, logger });
    await db.close();
    process.stdout.write(`${schema}: up to date\n`);
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
