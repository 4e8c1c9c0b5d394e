import type { Knex, Migration } from '@vision/shared';
import { generateKey, hashKey, keyIdForConfiguredKey } from '../domain/key-format';

export const keyMigrations: Migration[] = [
  {
    name: '001_api_keys',
    async up(knex: Knex) {
      await knex.schema.createTable('api_keys', (t) => {
        t.string('key_id', 64).primary();
        t.string('subject', 128).notNullable().index();
        t.string('key_hash', 64).notNullable().unique();
        t.string('source', 16).notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('revoked_at', { useTz: true }).nullable();
      });
    },
  },
];

export interface KeyRecord {
  keyId: string;
  subject: string;
  source: string;
  createdAt: Date;
  revokedAt: Date | null;
}

interface KeyRow {
  key_id: string;
  subject: string;
  key_hash: string;
  source: string;
  created_at: Date | string;
  revoked_at: Date | string | null;
}

const toRecord = (r: KeyRow): KeyRecord => ({
  keyId: r.key_id,
  subject: r.subject,
  source: r.source,
  createdAt: new Date(r.created_at),
  revokedAt: r.revoked_at ? new Date(r.revoked_at) : null,
});

/**
 * What the gateway's requests need of the key store: the subject of a key, and how many revocations were
 * made (the generation of its lookup cache, use-cases/authenticate.ts). The KeyStore itself, or in the
 * standalone process a proxy to the one in the main thread.
 */
export interface KeyLookup {
  authenticate(key: string): Promise<string | undefined>;
  readonly revocations: number;
}

/** API keys, stored only as sha256 hashes, each bound to a subject. */
export class KeyStore implements KeyLookup {
  /** Revocations made through this store; a cache of lookups drops what it holds when the count moves. */
  revocations = 0;
  private readonly revocationWatchers = new Set<(count: number) => void>();

  constructor(
    private readonly knex: Knex,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The subject of an active key, or undefined for unknown and revoked keys. */
  async authenticate(key: string): Promise<string | undefined> {
    const row: Pick<KeyRow, 'subject'> | undefined = await this.knex('api_keys')
      .select('subject')
      .where('key_hash', hashKey(key))
      .whereNull('revoked_at')
      .first();
    return row?.subject;
  }

  /** Creates a key for a subject; the returned key is shown once and never stored. */
  async create(subject: string, source = 'cli'): Promise<{ keyId: string; key: string }> {
    const k = generateKey();
    await this.add({ keyId: k.keyId, subject, hash: k.hash, source });
    return { keyId: k.keyId, key: k.key };
  }

  /** Stores a key made elsewhere (the key CLI sends a running standalone gateway its id and hash only). */
  async add(k: { keyId: string; subject: string; hash: string; source: string }): Promise<void> {
    await this.knex('api_keys').insert({
      key_id: k.keyId,
      subject: k.subject,
      key_hash: k.hash,
      source: k.source,
      created_at: this.now(),
    });
  }

  /**
   * Makes the stored configuration keys (source `env`) exactly the configured ones: adds the new,
   * removes those no longer configured (so they stop working), and keeps a revocation made with the
   * CLI. Throws, changing nothing, when a configured key is stored for another subject: a key never
   * moves to another subject's data.
   */
  async syncConfigured(configured: readonly { key: string; subject: string }[]): Promise<void> {
    const wanted = new Map(configured.map(({ key, subject }) => [hashKey(key), { key, subject }]));
    await this.knex.transaction(async (trx) => {
      const hashes = [...wanted.keys()];
      const stored: Pick<KeyRow, 'key_id' | 'key_hash' | 'subject'>[] = hashes.length
        ? await trx('api_keys').select('key_id', 'key_hash', 'subject').whereIn('key_hash', hashes)
        : [];
      for (const row of stored) {
        const want = wanted.get(row.key_hash);
        if (want && want.subject !== row.subject)
          throw new Error(
            `VISION_API_KEYS: key ${row.key_id} is stored for subject "${row.subject}" but configured for ` +
              `subject "${want.subject}"; a key cannot change subject. Configure a new key for ` +
              `"${want.subject}" (and revoke this one with npm run keys).`,
          );
      }
      const removed = trx('api_keys').where({ source: 'env' });
      await (hashes.length ? removed.whereNotIn('key_hash', hashes) : removed).delete();
      const known = new Set(stored.map((r) => r.key_hash));
      const rows = [...wanted.entries()]
        .filter(([hash]) => !known.has(hash))
        .map(([hash, { key, subject }]) => ({
          key_id: keyIdForConfiguredKey(key),
          subject,
          key_hash: hash,
          source: 'env',
          created_at: this.now(),
        }));
      if (rows.length) await trx('api_keys').insert(rows).onConflict('key_hash').ignore();
    });
  }

  async list(): Promise<KeyRecord[]> {
    const rows: KeyRow[] = await this.knex('api_keys').select('*').orderBy('created_at', 'asc');
    return rows.map(toRecord);
  }

  async count(): Promise<number> {
    const r = await this.knex('api_keys').count<{ n: string | number }[]>({ n: '*' });
    return Number(r[0]?.n ?? 0);
  }

  /** Revokes a key by id; false when no active key has that id. */
  async revoke(keyId: string): Promise<boolean> {
    const n = await this.knex('api_keys').where({ key_id: keyId }).whereNull('revoked_at').update({
      revoked_at: this.now(),
    });
    // Counted once committed: a lookup that read the key before the commit ends after this and is not cached.
    this.revocations += 1;
    for (const watch of this.revocationWatchers) watch(this.revocations);
    return n > 0;
  }

  /** Calls `watch` with the new count after each revocation (a cache in another thread); returns the function that stops it. */
  watchRevocations(watch: (count: number) => void): () => void {
    this.revocationWatchers.add(watch);
    return () => this.revocationWatchers.delete(watch);
  }
}
