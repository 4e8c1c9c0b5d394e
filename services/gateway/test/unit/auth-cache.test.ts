import { AuthCache } from '../../src/use-cases/authenticate';

/** A key database the test controls: each lookup waits until the test lets it answer. */
function heldKeys() {
  const active = new Map([['key-1', 'acme']]);
  const waiting: (() => void)[] = [];
  const store = {
    revocations: 0,
    lookups: 0,
    hold: false,
    async authenticate(key: string): Promise<string | undefined> {
      store.lookups += 1;
      const subject = active.get(key); // read now, answered later
      if (store.hold) await new Promise<void>((resolve) => waiting.push(resolve));
      return subject;
    },
    revoke(key: string) {
      active.delete(key);
      store.revocations += 1;
    },
    release: () => waiting.splice(0).forEach((go) => go()),
    waiting: () => waiting.length,
  };
  return store;
}

const cacheOver = (keys: ReturnType<typeof heldKeys>, now = () => 0) =>
  new AuthCache(
    (k) => keys.authenticate(k),
    60_000,
    100,
    now,
    () => keys.revocations,
  );

test('a key revoked while its lookup is in flight is not cached: the next request is refused', async () => {
  const keys = heldKeys();
  const cache = cacheOver(keys);
  keys.hold = true;
  const first = cache.authenticate('key-1');
  await new Promise((r) => setImmediate(r));
  expect(keys.waiting()).toBe(1); // the lookup read the key as active and is held open
  keys.revoke('key-1');
  keys.hold = false;
  keys.release();
  // The lookup that straddled the revocation is not trusted: the key is looked up again.
  expect(await first).toBeUndefined();
  expect(await cache.authenticate('key-1')).toBeUndefined();
  expect(keys.lookups).toBe(3);
});

test('a revocation drops the entries cached before it; without one, a hit costs no lookup', async () => {
  const keys = heldKeys();
  const cache = cacheOver(keys);
  expect(await cache.authenticate('key-1')).toBe('acme');
  expect(await cache.authenticate('key-1')).toBe('acme');
  expect(keys.lookups).toBe(1);
  keys.revoke('key-1');
  expect(await cache.authenticate('key-1')).toBeUndefined();
  expect(keys.lookups).toBe(2);
});

test('entries still expire after the time to live', async () => {
  const keys = heldKeys();
  let t = 0;
  const cache = cacheOver(keys, () => t);
  await cache.authenticate('key-1');
  t = 59_999;
  await cache.authenticate('key-1');
  expect(keys.lookups).toBe(1);
  t = 60_000;
  await cache.authenticate('key-1');
  expect(keys.lookups).toBe(2);
});
