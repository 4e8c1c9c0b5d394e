import type { ServiceClient, SpendOutcome } from '@vision/shared';
import { ApiError, type Identity, UnreachableError } from '@vision/shared';

export type SettleOutcome = 'settled' | 'retry_later' | 'exhausted' | 'gone';

/** Quota's answer to a lease: its units in all and when spending from it ends. */
export interface LeaseAnswer {
  lease_id: string;
  units: number;
  usable_until: string;
}

/** One call's spend as quota recorded it (docs/INTERNAL.md, quota, leases): the one definition is shared with quota. */
export type { SpendOutcome };

/** Quota's answer to a spend report: each call's outcome, and the lease's window as quota has it now. */
export interface SpendAnswer {
  outcomes: Map<string, SpendOutcome>;
  /** Epoch ms; earlier than the holder's copy once quota recalled the lease. */
  usableUntil?: number;
}

export interface LeaseRequest {
  minUnits: number;
  maxUnits: number;
  windowMs: number;
  ttlMs: number;
}

/** The settle of a quota hold (docs/INTERNAL.md, quota) for kind `image`: calls recorded with a hold settle it. */
export class QuotaClient {
  constructor(private readonly client: ServiceClient) {}

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

/**
 * The quota service's lease contract (docs/INTERNAL.md, quota) for kind `image`. `lease` throws 429
 * OP-QUOTA-DAILY-EXHAUSTED when the day cannot give `minUnits`, 400 `lease_ended` when the lease can no
 * longer grow, 503 when quota is unreachable; `spend` and `close` throw UnreachableError or ApiError.
 */
export class QuotaLeaseClient {
  constructor(private readonly client: ServiceClient) {}

  async lease(identity: Identity, leaseId: string, r: LeaseRequest, deadline?: number): Promise<LeaseAnswer> {
    const res = await this.client.request<LeaseAnswer>(`/internal/v1/leases/${encodeURIComponent(leaseId)}`, {
      method: 'PUT',
      identity,
      json: {
        kind: 'image',
        min_units: r.minUnits,
        max_units: r.maxUnits,
        window_ms: r.windowMs,
        ttl_ms: r.ttlMs,
      },
      ...(deadline !== undefined ? { deadline } : {}),
    });
    return res.body;
  }

  async spend(
    identity: Identity,
    leaseId: string,
    spends: ReadonlyArray<{ charge_id: string; units: number }>,
  ): Promise<SpendAnswer> {
    const res = await this.client.call<{
      spends?: Array<{ charge_id: string; outcome: SpendOutcome }>;
      usable_until?: string;
    }>(`/internal/v1/leases/${encodeURIComponent(leaseId)}/spends`, { identity, json: { spends } });
    if (res.status !== 200 || !Array.isArray(res.body.spends))
      throw new ApiError('OP-SYS-UNAVAILABLE', `quota answered ${res.status} to a spend report`, {
        upstream_status: res.status,
      });
    const until = res.body.usable_until === undefined ? NaN : Date.parse(res.body.usable_until);
    return {
      outcomes: new Map(res.body.spends.map((s) => [s.charge_id, s.outcome])),
      ...(Number.isFinite(until) && { usableUntil: until }),
    };
  }

  async close(identity: Identity, leaseId: string): Promise<void> {
    await this.client.request(`/internal/v1/leases/${encodeURIComponent(leaseId)}/close`, {
      identity,
      json: {},
    });
  }
}

export function isLeaseEnded(err: unknown): boolean {
  return (
    err instanceof ApiError && (err.details as { reason?: string } | undefined)?.reason === 'lease_ended'
  );
}

/**
 * Units quota recalled from the subject's other leases when it refused this one (429 `details.recalled`): they
 * return to the day as those leases close, so the lease may be asked for again shortly. 0 for any other error.
 */
export function recalledUnits(err: unknown): number {
  if (!(err instanceof ApiError) || err.code !== 'OP-QUOTA-DAILY-EXHAUSTED') return 0;
  const n = (err.details as { recalled?: unknown } | undefined)?.recalled;
  return typeof n === 'number' && n > 0 ? n : 0;
}

/** The caller's 429: quota's, without what only concerns the leases' holders. */
export function withoutRecall(err: ApiError): ApiError {
  const { recalled: _recalled, ...details } = err.details ?? {};
  return new ApiError(err.code, err.message, details, err.headers);
}

export function isQuotaExhausted(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'OP-QUOTA-DAILY-EXHAUSTED';
}
