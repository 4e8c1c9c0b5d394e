/** Charges and refunds of the daily video quota (docs/INTERNAL.md, quota). */
import type { Clock, Identity, ServiceClient } from '@vision/shared';
import { ApiError, UnreachableError, fromEnvelope } from '@vision/shared';
import { isQuotaFigures, rateLimitHeaders } from '../domain/rate-limit-headers';

export type ChargeOutcome =
  | { kind: 'charged'; day: string; headers: Record<string, string> }
  /** The charge id was charged and refunded already (or refunded before it arrived): nothing is charged. */
  | { kind: 'refunded' }
  | { kind: 'exhausted'; error: ApiError; headers: Record<string, string> }
  /** The quota service could not be asked; `maybeCharged` when the request may have landed. */
  | { kind: 'unavailable'; maybeCharged: boolean };

export class QuotaClient {
  constructor(
    private readonly client: ServiceClient,
    private readonly clock: Clock,
  ) {}

  private headersFrom(figures: unknown, retryAfter: string | string[] | undefined): Record<string, string> {
    const h = isQuotaFigures(figures) ? rateLimitHeaders(figures, this.clock.now()) : {};
    if (retryAfter) h['Retry-After'] = String(retryAfter);
    else if (isQuotaFigures(figures) && figures.remaining <= 0) {
      const secs = Math.max(
        1,
        Math.ceil((Date.parse(figures.resets_at) - this.clock.now().getTime()) / 1000),
      );
      h['Retry-After'] = String(secs);
    }
    return h;
  }

  /** Charges one video task unit under `chargeId` (idempotent: the task id), carrying the caller's deadline. */
  async charge(identity: Identity, chargeId: string, deadline?: number): Promise<ChargeOutcome> {
    let r;
    try {
      r = await this.client.call<unknown>('/internal/v1/charges', {
        identity,
        json: { charge_id: chargeId, kind: 'video', units: 1 },
        ...(deadline !== undefined ? { deadline } : {}),
      });
    } catch (err) {
      if (err instanceof UnreachableError) return { kind: 'unavailable', maybeCharged: err.maybeDelivered };
      throw err;
    }
    if (r.status === 200 || r.status === 201) {
      const body = r.body as { day?: string; status?: string };
      if (body.status === 'refunded') return { kind: 'refunded' };
      return { kind: 'charged', day: String(body.day ?? ''), headers: this.headersFrom(r.body, undefined) };
    }
    if (r.status === 429) {
      const details = (r.body as { error?: { details?: unknown } } | undefined)?.error?.details;
      const headers = this.headersFrom(details, r.headers['retry-after']);
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
