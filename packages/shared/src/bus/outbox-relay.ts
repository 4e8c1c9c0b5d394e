import type { Knex } from 'knex';
import type { Clock } from '../time/clock';
import type { Logger } from '../telemetry/logger';
import { Periodic } from '../time/periodic';
import { traceHeaders } from './bus-tracing';
import type { Bus, OutgoingMessage } from './port';

/** Column names of a service's outbox table (each service keeps its own schema). */
export interface OutboxTable {
  table: string;
  key: string;
  payload: string;
  sentAt: string;
  claimedUntil: string;
  /** JSON object of the writer's trace headers (W3C traceparent/tracestate), null on older rows. */
  headers: string;
}

export const DEFAULT_OUTBOX_TABLE: OutboxTable = {
  table: 'outbox',
  key: 'key',
  payload: 'payload',
  sentAt: 'sent_at',
  claimedUntil: 'claimed_until',
  headers: 'headers',
};

/**
 * The row a writer inserts into its outbox table (columns `cols`), in the transaction or statement of the change
 * the event reports: the event, its message key, and the trace of the request that wrote it (W3C headers), which
 * the event's consumers join.
 */
export function outboxRow(
  cols: OutboxTable,
  topic: string,
  key: string,
  event: object,
  at: Date,
): Record<string, string | Date> {
  return {
    topic,
    [cols.key]: key,
    [cols.payload]: JSON.stringify(event),
    [cols.headers]: JSON.stringify(traceHeaders()),
    created_at: at,
  };
}

export interface OutboxRelayOptions {
  knex: Knex;
  bus: Pick<Bus, 'publish'>;
  clock: Clock;
  logger: Logger;
  /** How often the relay looks for unsent rows when nothing wakes it. */
  intervalMs: number;
  /**
   * How long a nudge waits before the relay runs, so that the events of that time go out in one batch
   * (QUOTA_OUTBOX_LINGER_MS, TASKS_OUTBOX_LINGER_MS); 0: at once. A request that wrote events answers
   * without the relay's statements in its way.
   */
  lingerMs?: number;
  batchSize?: number;
  columns?: OutboxTable;
  /** Names the loop in logs. */
  name?: string;
}

interface OutboxRow {
  id: string | number;
  topic: string;
  key: string;
  payload: unknown;
  headers: unknown;
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
 * The one transactional-outbox relay (quota and tasks): publishes the rows their transactions wrote,
 * oldest first, and marks them sent. A batch is claimed (`FOR UPDATE SKIP LOCKED`, then a claim
 * lease) so that replicas never publish one row at the same time; a publish that fails releases
 * the claim and the rows go out in a later round; a relay that dies mid-publish leaves its claim to
 * lapse. Delivery is at least once (consumers dedupe by `event_id`).
 *
 * The loop (its period and its nudges) marks a batch sent in the statement that claims its next one, which
 * runs at the next nudge or period anyway: one statement per batch instead of two. Until then the batch stays
 * claimed, so no relay takes it; a relay that dies first leaves it to go out again once its claim lapses.
 * `flush()` and `stop()` mark what they published before they resolve.
 */
export class OutboxRelay {
  private readonly loop: Periodic;
  private readonly cols: OutboxTable;
  private chain: Promise<unknown> = Promise.resolve();
  private started = false;
  /** Ids published by the loop whose mark as sent rides on the next claim. */
  private published: Array<string | number> = [];

  constructor(private readonly opts: OutboxRelayOptions) {
    this.cols = opts.columns ?? DEFAULT_OUTBOX_TABLE;
    this.loop = new Periodic(opts.name ?? 'outbox relay', opts.intervalMs, () => this.run(true), opts.logger);
  }

  start(): void {
    this.started = true;
    this.loop.start(this.opts.intervalMs);
  }

  /** Wakes a started relay within `lingerMs` (after a commit that wrote events). */
  nudge(): void {
    if (this.started) this.loop.nudge(this.opts.lingerMs ?? 0);
  }

  /** Publishes every unsent row now (one flush at a time); resolves with how many were published. */
  flush(): Promise<number> {
    return this.run(false);
  }

  private run(deferMark: boolean): Promise<number> {
    const run = this.chain.catch(() => undefined).then(() => this.drain(deferMark));
    this.chain = run;
    return run;
  }

  private async drain(deferMark: boolean): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.publishBatch();
      total += n;
      if (n < (this.opts.batchSize ?? 100)) break;
    }
    if (!deferMark) await this.markPublished();
    return total;
  }

  /** Marks the rows the loop published sent now (flush, stop). */
  private async markPublished(): Promise<void> {
    const ids = this.published;
    if (ids.length === 0) return;
    const c = this.cols;
    await this.opts
      .knex(c.table)
      .whereIn('id', ids)
      .update({ [c.sentAt]: this.opts.clock.now(), [c.claimedUntil]: null });
    this.published = [];
  }

  private async publishBatch(): Promise<number> {
    const { knex, bus, clock } = this.opts;
    const c = this.cols;
    const limit = this.opts.batchSize ?? 100;
    // One statement claims a batch (the oldest unsent, unclaimed rows, `FOR UPDATE SKIP LOCKED` so that
    // replicas never take the same row) and returns it; the publish happens outside any transaction, so a
    // slow broker never holds a database connection (PGlite has only one). The same statement marks the rows
    // the loop published last sent (`done`), and leaves them out of the batch.
    const now = clock.now();
    const sent = this.published;
    const marks = sent.map(() => '?').join(', ');
    const claimed = (await knex.raw(
      `with ${sent.length ? `done as (update ?? set ?? = ?, ?? = null where id in (${marks})), ` : ''}batch as (
         select id from ?? where ?? is null and (?? is null or ?? < ?)${sent.length ? ` and id not in (${marks})` : ''}
         order by id limit ? for update skip locked
       )
       update ?? as o set ?? = ? from batch where o.id = batch.id
       returning o.id, o.topic, o.?? as "key", o.?? as "payload", o.?? as "headers"`,
      [
        ...(sent.length ? [c.table, c.sentAt, now, c.claimedUntil, ...sent] : []),
        c.table,
        c.sentAt,
        c.claimedUntil,
        c.claimedUntil,
        now,
        ...sent,
        limit,
        c.table,
        c.claimedUntil,
        new Date(now.getTime() + CLAIM_MS),
        c.key,
        c.payload,
        c.headers,
      ],
    )) as { rows: OutboxRow[] };
    this.published = [];
    const rows = claimed.rows.sort(byId);
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
      await knex(c.table)
        .whereIn('id', ids)
        .update({ [c.claimedUntil]: null });
      throw err;
    }
    this.published = ids;
    return rows.length;
  }

  /** Deletes rows sent before `before`; returns how many. */
  async prune(before: Date): Promise<number> {
    const r: unknown = await this.opts
      .knex(this.cols.table)
      .whereNotNull(this.cols.sentAt)
      .andWhere(this.cols.sentAt, '<', before)
      .delete();
    return affectedRows(r);
  }

  async stop(): Promise<void> {
    this.started = false;
    await this.loop.stop();
    await this.chain.catch(() => undefined);
    await this.markPublished().catch((err: unknown) => {
      this.opts.logger.warn({ err }, 'published outbox rows not marked sent; they go out again');
    });
  }
}

/** Outbox ids in insertion order (bigint ids arrive as strings over pg). */
function byId(a: OutboxRow, b: OutboxRow): number {
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The trace headers an outbox row kept (undefined for rows written before they were kept). */
export function parseHeaders(raw: unknown): Record<string, string> | undefined {
  if (raw === null || raw === undefined || raw === '') return undefined;
  try {
    const h = (typeof raw === 'string' ? JSON.parse(raw) : raw) as unknown;
    return h && typeof h === 'object' ? (h as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}
