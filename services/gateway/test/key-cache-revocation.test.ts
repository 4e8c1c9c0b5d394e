/** The gateway's key cache over the real key store (PGlite): a revocation during a lookup is not cached. */
import { createLogger, openDb, type Db } from '@vision/shared';
import { KeyStore, keyMigrations } from '../src/store/key-store';
import { AuthCache } from '../src/use-cases/authenticate';

jest.setTimeout(120_000);

let db: Db;
beforeAll(async () => {
  db = await openDb(
    { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: ':memory:' },
    { schema: 'gateway', migrations: keyMigrations, logger: createLogger('test', { level: 'silent' }) },
  );
});
afterAll(() => db.close());

test('a key revoked while the test holds its lookup open is refused at the next request', async () => {
  const keys = new KeyStore(db.knex);
  const { keyId, key } = await keys.create('acme');
  let held: (() => void) | undefined;
  let read: (() => void) | undefined;
  const readDone = new Promise<void>((resolve) => (read = resolve));
  let lookups = 0;
  // As in http/app.ts: the cache follows the store's revocation count.
  const cache = new AuthCache(
    async (k) => {
      lookups += 1;
      const subject = await keys.authenticate(k);
      if (lookups === 1) {
        read!();
        await new Promise<void>((resolve) => (held = resolve));
      }
      return subject;
    },
    60_000,
    undefined,
    undefined,
    () => keys.revocations,
  );
  const first = cache.authenticate(key);
  await readDone; // the lookup has read the key as active
  expect(await keys.revoke(keyId)).toBe(true);
  held!();
  expect(await first).toBeUndefined();
  expect(await cache.authenticate(key)).toBeUndefined();
  expect(lookups).toBe(3);
});
