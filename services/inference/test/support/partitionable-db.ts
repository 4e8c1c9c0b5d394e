import type { Db } from '@vision/shared';

/**
 * The shared store as one replica reaches it: between `cut()` and `heal()` every statement of that replica fails,
 * as over a network partition, while the other replicas reach the store as before.
 */
export function partitionable(db: Db): { db: Db; cut(): void; heal(): void } {
  let cut = false;
  const refuse = () => new Error('the store is unreachable from this replica');
  const knex = new Proxy(db.knex, {
    apply: (target, self, args: unknown[]) => {
      if (cut) throw refuse();
      return Reflect.apply(target, self, args) as unknown;
    },
    get: (target, prop, receiver) => {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'raw' || typeof v !== 'function') return v;
      return (...args: unknown[]) => (cut ? Promise.reject(refuse()) : Reflect.apply(v, target, args));
    },
  });
  return {
    db: { ...db, knex, check: () => db.check(), close: async () => undefined },
    cut: () => (cut = true),
    heal: () => (cut = false),
  };
}
