/**
 * The object-store buckets of the node's releases: one per release, named after its database (installRelease).
 * SeaweedFS gives every bucket volumes of its own and has a bounded number of them, so buckets left behind by
 * uninstalled releases run it out: then every upload fails at the store with "No writable volumes and no free volumes
 * left", and the services answer 503 OP-SYS-UNAVAILABLE ("Object storage is unavailable").
 */
import { Client as PgClient } from 'pg';
import { minioClient, readStackEnv, removeBucket } from '../../scripts/distributed/stack-servers';

const PREFIX = 'vision-node-';

/** Removes the buckets of the node's releases whose database is gone (uninstalled); resolves with their names. */
export async function removeOrphanBuckets(): Promise<string[]> {
  const env = readStackEnv();
  const pg = new PgClient({ connectionString: `${env.pgUrl}/postgres` });
  await pg.connect();
  let databases: Set<string>;
  try {
    const r = await pg.query<{ datname: string }>('select datname from pg_database');
    databases = new Set(r.rows.map((row) => row.datname));
  } finally {
    await pg.end();
  }
  const s3 = minioClient(env);
  const orphans = (await s3.listBuckets())
    .map((b) => b.name)
    .filter((name) => name.startsWith(PREFIX) && !databases.has(name.replace(/-/g, '_')));
  for (const name of orphans) await removeBucket(s3, name);
  return orphans;
}
