import type { ServiceClient } from '@vision/shared';
import { ApiError, type Identity, UnreachableError } from '@vision/shared';

export type SettleOutcome = 'settled' | 'retry_later' | 'exhausted' | 'gone';

/** The quota service's hold/settle contract (docs/INTERNAL.md, quota) for kind `image`. */
export class QuotaClient {
  constructor(private readonly client: ServiceClient) {}

  /**
   * Holds `units` images; throws 429 OP-QUOTA-DAILY-EXHAUSTED when fewer remain, 503 when quota is
   * unreachable. The hold carries the caller's deadline; the settle never does (it must happen anyway).
   */
  async hold(
    identity: Identity,
    holdId: string,
    units: number,
    ttlMs: number,
    deadline?: number,
  ): Promise<void> {
    await this.client.request(`/internal/v1/holds`, {
      identity,
      json: { hold_id: holdId, kind: 'image', units, ttl_ms: ttlMs },
      ...(deadline !== undefined ? { deadline } : {}),
    });
  }

  /**
   * Settles a hold to the units that succeeded (0 releases it). `retry_later` when quota could not be
   * reached or failed; `exhausted` when the hold had expired and its units no longer fit the day (429,
   * nothing recorded); `gone` when quota refused it for good otherwise (for example an unknown hold).
   */
  async settle(identity: Identity, holdId: string, units: number): Promise<SettleOutcome> {
    try {
      const r = await this.client.call(`/internal/v1/holds/${encodeURIComponent(holdId)}/settle`, {
        identity,
        json: { units },
      });
      if (r.status >= 200 && r.status < 300) return 'settled';
      if (r.status === 429) return 'exhausted';
      return r.status >= 500 ? 'retry_later' : 'gone';
    } catch (err) {
      if (err instanceof UnreachableError) return 'retry_later';
      throw err;
    }
  }
}

export function isQuotaExhausted(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'OP-QUOTA-DAILY-EXHAUSTED';
}
