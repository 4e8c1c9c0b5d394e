import type { Bus, Clock, Knex, Logger, OutgoingMessage } from '@vision/shared';

interface OutboxRow {
  id: string | number;
  topic: string;
  key: string;
  payload: unknown;
  headers: string | null;
}

export interface OutboxRelayOptions {
  knex: Knex;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  /** How often the relay looks for unsent rows when nothing wakes it. */
  intervalMs: number;
  batchSize?: number;
}

/** Rows a delete or update touched: knex answers a number over pg, the driver's result over PGlite. */
export function affectedRows(result: unknown): number {
  if (typeof result === 'number') return result;
  const r = result as { affectedRows?: unknown; rowCount?: unknown } | null;
  return Number(r?.affectedRows ?? r?.rowCount ?? 0);
}

/** How long a relay may take to publish the batch it claimed before another relay may take it over. */
const CLAIM_MS = 60_000;

/**
 * Publishes the outbox rows written by ledger transactions, oldest first, and marks them sent. A batch
 * is claimed (`FOR UPDATE SKIP LOCKED`, then a claim lease) so replicas do not publish one row at the
 * same time; a publish that fails releases the claim and the rows go out in a later round; a relay
 * that dies mid-publish leaves its claim to lapse. Delivery is at least once (consumers dedupe by
 * `event_id`). Rows of rolled-back transactions
 * never exist, so nothing is published for a change that did not happen.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly opts: OutboxRelayOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(this.opts.intervalMs);
  }

  /** Wakes the relay soon (after a commit that wrote events). */
  nudge(): void {
    if (this.stopped || !this.timer) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.flush()
        .catch((err: unknown) => this.opts.logger.warn({ err }, 'quota outbox relay failed; will retry'))
        .finally(() => {
          if (this.stopped) return;
          const soon = this.again;
          this.again = false;
          this.schedule(soon ? 0 : this.opts.intervalMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** Publishes every unsent row now; resolves with how many were published. */
  async flush(): Promise<number> {
    while (this.running) await this.running.catch(() => undefined);
    this.running = this.drain();
    try {
      return await this.running;
    } finally {
      this.running = undefined;
    }
  }

  private async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.publishBatch();
      total += n;
      if (n < (this.opts.batchSize ?? 100)) return total;
    }
  }

  private async publishBatch(): Promise<number> {
    const { knex, bus, clock } = this.opts;
    const limit = this.opts.batchSize ?? 100;
    // A short transaction claims a batch; the publish happens outside it, so a slow broker never
    // holds a database connection (PGlite has only one).
    const now = clock.now();
    const rows = await knex.transaction(async (trx) => {
      const ids = (await trx('outbox')
        .whereNull('sent_at')
        .andWhere((q) => {
          // A block body: knex builders are thenable, and the grouping callback must not return one.
          void q.whereNull('claimed_until').orWhere('claimed_until', '<', now);
        })
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .pluck('id')) as Array<string | number>;
      if (ids.length === 0) return [] as OutboxRow[];
      await trx('outbox')
        .whereIn('id', ids)
        .update({ claimed_until: new Date(now.getTime() + CLAIM_MS) });
      return (await trx('outbox')
        .whereIn('id', ids)
        .orderBy('id')
        .select('id', 'topic', 'key', 'payload', 'headers')) as OutboxRow[];
    });
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    try {
      const byTopic = new Map<string, OutgoingMessage[]>();
      for (const r of rows) {
        const value = (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as object;
        const list = byTopic.get(r.topic) ?? [];
        list.push({ key: r.key, value, headers: parseHeaders(r.headers) });
        byTopic.set(r.topic, list);
      }
      for (const [topic, messages] of byTopic) await bus.publish(topic, messages);
    } catch (err) {
      await knex('outbox').whereIn('id', ids).update({ claimed_until: null });
      throw err;
    }
    await knex('outbox').whereIn('id', ids).update({ sent_at: clock.now(), claimed_until: null });
    return rows.length;
  }

  /** Deletes rows sent before `before`; returns how many. */
  async prune(before: Date): Promise<number> {
    const r: unknown = await this.opts
      .knex('outbox')
      .whereNotNull('sent_at')
      .andWhere('sent_at', '<', before)
      .delete();
    return affectedRows(r);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running) await this.running.catch(() => undefined);
  }
}

/** The trace headers an outbox row kept (null for rows written before they were kept). */
export function parseHeaders(raw: string | null | undefined): Record<string, string> | undefined {
  if (!raw) return undefined;
  try {
    const h = JSON.parse(raw) as unknown;
    return h && typeof h === 'object' ? (h as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}
