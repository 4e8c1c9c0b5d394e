import { hashKey } from '../domain/key-format';

/**
 * Remembers recently authenticated keys (by hash, never the key) for a short time, so that a busy
 * subject does not cost a database lookup per request. Only successes are cached: an unknown key is
 * looked up every time, and a revoked key stops working within `ttlMs`.
 */
export class AuthCache {
  private readonly entries = new Map<string, { subject: string; until: number }>();

  constructor(
    private readonly lookup: (key: string) => Promise<string | undefined>,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(key: string): Promise<string | undefined> {
    if (this.ttlMs <= 0) return this.lookup(key);
    const h = hashKey(key);
    const hit = this.entries.get(h);
    if (hit && hit.until > this.now()) return hit.subject;
    this.entries.delete(h);
    const subject = await this.lookup(key);
    if (subject) {
      if (this.entries.size >= this.maxEntries)
        this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(h, { subject, until: this.now() + this.ttlMs });
    }
    return subject;
  }
}
