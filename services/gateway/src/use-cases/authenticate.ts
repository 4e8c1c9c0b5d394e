import { hashKey } from '../domain/key-format';

/**
 * Remembers recently authenticated keys (by hash, never the key) for a short time, so that a busy
 * subject does not cost a database lookup per request. Only successes are cached: an unknown key is
 * looked up every time, and a revoked key stops working within `ttlMs`.
 *
 * `generation` counts the revocations this process made (KeyStore.revocations): an entry is used only
 * while the count is the one it was looked up under, so a revocation here drops every entry at once. A
 * lookup during which the count moved (it may have read the key before the revocation committed) is
 * neither cached nor trusted: the key is looked up again.
 */
export class AuthCache {
  private readonly entries = new Map<string, { subject: string; until: number; generation: number }>();

  constructor(
    private readonly lookup: (key: string) => Promise<string | undefined>,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
    private readonly generation: () => number = () => 0,
  ) {}

  async authenticate(key: string): Promise<string | undefined> {
    if (this.ttlMs <= 0) return this.lookup(key);
    const h = hashKey(key);
    const hit = this.entries.get(h);
    if (hit && hit.until > this.now() && hit.generation === this.generation()) return hit.subject;
    this.entries.delete(h);
    for (;;) {
      const generation = this.generation();
      const subject = await this.lookup(key);
      if (generation !== this.generation()) continue;
      if (subject) {
        if (this.entries.size >= this.maxEntries)
          this.entries.delete(this.entries.keys().next().value as string);
        this.entries.set(h, { subject, until: this.now() + this.ttlMs, generation });
      }
      return subject;
    }
  }
}
