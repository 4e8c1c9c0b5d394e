/** Charges and refunds of the daily video quota (docs/INTERNAL.md, quota). */
import type { ServiceClient } from '@vision/shared';
import { ApiError, type Identity, UnreachableError, fromEnvelope } from '@vision/shared';

/** Rate-limit headers (draft-ietf-httpapi-ratelimit-headers) the quota service answers with. */
export const RATE_LIMIT_HEADERS = ['ratelimit-policy', 'ratelimit'] as const;

export type ChargeOutcome =
  | { kind: 'charged'; day: string; headers: Record<string, string> }
  | { kind: 'exhausted'; error: ApiError; headers: Record<string, string> }
  /** The quota service could not be asked; `maybeCharged` when the request may have landed. */
  | { kind: 'unavailable'; maybeCharged: boolean };

function rateLimitHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of RATE_LIMIT_HEADERS) {
    const v = h.get(name);
    if (v) out[name === 'ratelimit' ? 'RateLimit' : 'RateLimit-Policy'] = v;
  }
  const retry = h.get('retry-after');
  if (retry) out['Retry-After'] = retry;
  return out;
}

export class QuotaClient {
  constructor(private readonly client: ServiceClient) {}

  /** Charges one video task unit under `chargeId` (idempotent: the task id). */
  async charge(identity: Identity, chargeId: string): Promise<ChargeOutcome> {
    let r;
    try {
      r = await this.client.call<unknown>('/internal/v1/charges', {
        identity,
        json: { charge_id: chargeId, kind: 'video', units: 1 },
      });
    } catch (err) {
      if (err instanceof UnreachableError) return { kind: 'unavailable', maybeCharged: err.maybeDelivered };
      throw err;
    }
    const headers = rateLimitHeaders(r.headers);
    if (r.status === 200 || r.status === 201) {
      const body = r.body as { day?: string };
      return { kind: 'charged', day: String(body.day ?? ''), headers };
    }
    if (r.status === 429) {
      const e =
        fromEnvelope(r.status, r.body) ??
        new ApiError('OP-QUOTA-DAILY-EXHAUSTED', 'Daily video task quota used up');
      return { kind: 'exhausted', error: e, headers };
    }
    return { kind: 'unavailable', maybeCharged: r.status >= 500 };
  }

  /**
   * Refunds a charge to its original day (idempotent). Resolves true when refunded or never charged
   * (404), false when the quota service could not be reached (callers retry later).
   */
  async refund(identity: Identity, chargeId: string): Promise<boolean> {
    try {
      const r = await this.client.call(`/internal/v1/charges/${encodeURIComponent(chargeId)}/refund`, {
        identity,
        method: 'POST',
      });
      return r.status === 200 || r.status === 404;
    } catch (err) {
      if (err instanceof UnreachableError) return false;
      throw err;
    }
  }
}
