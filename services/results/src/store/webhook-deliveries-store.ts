import { affectedRows, type Knex } from '@vision/shared';
import type { DeliveryStatus } from '../domain/webhooks/requests';
import type { AttemptRow, DeliveryRow } from '../domain/webhooks/rows';

export type { AttemptRow, DeliveryRow };

export type NewDelivery = Pick<
  DeliveryRow,
  'endpoint_id' | 'delivery_id' | 'event_type' | 'order_key' | 'body' | 'trace_headers'
>;

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));

export function toDelivery(r: Record<string, unknown>): DeliveryRow {
  const th = r.trace_headers;
  return {
    ...(r as unknown as DeliveryRow),
    seq: Number(r.seq),
    attempts: Number(r.attempts),
    round_start_attempts: Number(r.round_start_attempts),
    trace_headers:
      typeof th === 'string'
        ? (JSON.parse(th) as Record<string, string>)
        : (th as DeliveryRow['trace_headers']),
    next_attempt_at: date(r.next_attempt_at),
    lease_until: date(r.lease_until),
    give_up_at: new Date(r.give_up_at as string),
    created_at: new Date(r.created_at as string),
    updated_at: new Date(r.updated_at as string),
    delivered_at: date(r.delivered_at),
    dead_at: date(r.dead_at),
  };
}

/** SQL of webhook deliveries and their attempts (schema `results`). */
export class WebhookDeliveriesStore {
  constructor(private readonly knex: Knex) {}

  /** Adds deliveries, due now; one that exists (the same event again) is left as it is. Returns how many were new. */
  async insert(rows: NewDelivery[], now: Date, horizonMs: number, q: Knex = this.knex): Promise<number> {
    if (rows.length === 0) return 0;
    const giveUpAt = new Date(now.getTime() + horizonMs);
    const inserted = (await q('webhook_deliveries')
      .insert(
        rows.map((r) => ({
          ...r,
          trace_headers: r.trace_headers === null ? null : JSON.stringify(r.trace_headers),
          status: 'pending',
          next_attempt_at: now,
          give_up_at: giveUpAt,
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict(['endpoint_id', 'delivery_id'])
      .ignore()
      .returning('delivery_id')) as unknown[];
    return inserted.length;
  }

  /**
   * Leases up to `limit` due deliveries for one attempt each (`attempts` + 1, `lease_until`). Rows another
   * dispatcher is leasing are skipped (`FOR UPDATE SKIP LOCKED`) and a leased row is due again only once its
   * lease lapsed, so no attempt is ever sent twice at once. A delivery waits while an older delivery of the
   * same endpoint and order key (task) is still pending.
   */
  async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<DeliveryRow[]> {
    const r = (await this.knex.raw(
      `WITH due AS (
         SELECT d.endpoint_id, d.delivery_id FROM webhook_deliveries d
         WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
             AND p.order_key = d.order_key AND p.status = 'pending' AND p.seq < d.seq)
         ORDER BY d.next_attempt_at, d.seq
         LIMIT ?
         FOR UPDATE OF d SKIP LOCKED)
       UPDATE webhook_deliveries w SET lease_until = ?, attempts = w.attempts + 1, updated_at = ?
       FROM due WHERE w.endpoint_id = due.endpoint_id AND w.delivery_id = due.delivery_id
       RETURNING w.*`,
      [now, now, limit, leaseUntil, now],
    )) as { rows: Record<string, unknown>[] };
    return r.rows.map(toDelivery).sort((a, b) => a.seq - b.seq);
  }

  /**
   * Records attempt `attempt` and the delivery's next state, if the lease is still this attempt's (a
   * dispatcher whose lease lapsed and was taken over changes nothing but its attempt's log line).
   */
  async complete(
    a: AttemptRow,
    next:
      | { status: 'delivered' }
      | { status: 'pending'; at: Date }
      | { status: 'dead' }
      | { status: 'disabled'; subject: string },
    now: Date,
  ): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      // The delivery may be gone with its endpoint (deleted while the attempt ran): then there is nothing to
      // log. The row lock keeps a delete from removing it between this check and the attempt's insert.
      const delivery = await trx('webhook_deliveries')
        .where({ endpoint_id: a.endpoint_id, delivery_id: a.delivery_id })
        .forUpdate()
        .first('delivery_id');
      if (delivery === undefined) return false;
      await trx('webhook_attempts').insert(a).onConflict(['endpoint_id', 'delivery_id', 'attempt']).ignore();
      const common = {
        lease_until: null,
        updated_at: now,
        last_status_code: a.status_code,
        last_outcome: a.outcome,
      };
      const patch =
        next.status === 'delivered'
          ? { ...common, status: 'delivered', delivered_at: now, next_attempt_at: null }
          : next.status === 'pending'
            ? { ...common, next_attempt_at: next.at }
            : { ...common, status: 'dead', dead_at: now, next_attempt_at: null };
      const n = await trx('webhook_deliveries')
        .where({
          endpoint_id: a.endpoint_id,
          delivery_id: a.delivery_id,
          attempts: a.attempt,
          status: 'pending',
        })
        .update(patch);
      if (affectedRows(n) === 0) return false;
      if (next.status === 'disabled') {
        await trx('webhook_endpoints')
          .where({ endpoint_id: a.endpoint_id })
          .update({ enabled: false, disabled_reason: 'gone', disabled_at: now, updated_at: now });
        await trx('webhook_deliveries').where({ endpoint_id: a.endpoint_id, status: 'pending' }).update({
          status: 'dead',
          dead_at: now,
          lease_until: null,
          next_attempt_at: null,
          last_outcome: 'endpoint_disabled',
          updated_at: now,
        });
      }
      return true;
    });
  }

  async get(endpointId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
    const r = (await this.knex('webhook_deliveries')
      .where({ endpoint_id: endpointId, delivery_id: deliveryId })
      .first()) as Record<string, unknown> | undefined;
    return r ? toDelivery(r) : undefined;
  }

  /** One page of an endpoint's deliveries, newest first (`before`: the seq the previous page ended at). */
  async page(
    endpointId: string,
    opts: { status?: DeliveryStatus; limit: number; before?: number },
  ): Promise<DeliveryRow[]> {
    const q = this.knex('webhook_deliveries').where({ endpoint_id: endpointId });
    if (opts.status) q.andWhere('status', opts.status);
    if (opts.before !== undefined) q.andWhere('seq', '<', opts.before);
    const rows = (await q.orderBy('seq', 'desc').limit(opts.limit)) as Record<string, unknown>[];
    return rows.map(toDelivery);
  }

  async attemptsOf(endpointId: string, deliveryIds: string[]): Promise<AttemptRow[]> {
    if (deliveryIds.length === 0) return [];
    const rows = (await this.knex('webhook_attempts')
      .where({ endpoint_id: endpointId })
      .whereIn('delivery_id', deliveryIds)
      .orderBy([{ column: 'delivery_id' }, { column: 'attempt' }])) as Record<string, unknown>[];
    return rows.map((r) => ({
      ...(r as unknown as AttemptRow),
      attempt: Number(r.attempt),
      duration_ms: Number(r.duration_ms),
      started_at: new Date(r.started_at as string),
    }));
  }

  /** Puts a dead delivery back in line, due now, with a fresh retry horizon; undefined unless it was dead. */
  async redeliver(
    endpointId: string,
    deliveryId: string,
    now: Date,
    horizonMs: number,
  ): Promise<DeliveryRow | undefined> {
    const [r] = (await this.knex('webhook_deliveries')
      .where({ endpoint_id: endpointId, delivery_id: deliveryId, status: 'dead' })
      .update({
        status: 'pending',
        next_attempt_at: now,
        lease_until: null,
        dead_at: null,
        give_up_at: new Date(now.getTime() + horizonMs),
        round_start_attempts: this.knex.ref('attempts'),
        updated_at: now,
      })
      .returning('*')) as Record<string, unknown>[];
    return r ? toDelivery(r) : undefined;
  }

  /** Pending deliveries (the retry backlog) and dead ones, for the gauges. */
  async counts(): Promise<{ pending: number; retrying: number; dead: number }> {
    const r = (await this.knex.raw(
      `SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
              count(*) FILTER (WHERE status = 'pending' AND attempts > round_start_attempts) AS retrying,
              count(*) FILTER (WHERE status = 'dead') AS dead
       FROM webhook_deliveries`,
    )) as { rows: { pending: string; retrying: string; dead: string }[] };
    const row = r.rows[0];
    return { pending: Number(row.pending), retrying: Number(row.retrying), dead: Number(row.dead) };
  }

  /** Deletes delivered and dead deliveries last changed before `before` (at most `limit`); returns how many. */
  async deleteEnded(before: Date, limit: number): Promise<number> {
    const r = await this.knex.raw(
      `DELETE FROM webhook_deliveries WHERE seq IN (
         SELECT seq FROM webhook_deliveries WHERE status <> 'pending' AND updated_at <= ? LIMIT ?)`,
      [before, limit],
    );
    return affectedRows(r);
  }
}
