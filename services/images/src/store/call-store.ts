import {
  ClaimTable,
  type ClaimRecord,
  type ClaimRef,
  type Clock,
  DEFAULT_OUTBOX_TABLE,
  type Knex,
  type NewClaim,
  systemClock,
} from '@vision/shared';
import type { ImageResult } from '../domain/results';
import { type ImageTaskRecord, imageTaskRecord, recordRow } from './call-record';

/** An image call: the claim of its Idempotency-Key (packages/shared idempotency) and its stored results. */
export interface CallRecord extends ClaimRecord {
  sceneCode: string;
  imageCount: number;
  results?: ImageResult[];
  units?: number;
  /** The quota lease its units are charged to (absent: a call settled by a quota hold). */
  leaseId?: string;
  createdAt: Date;
  completedAt?: Date;
  /** When the results were first stored and last stored or rewritten (the task record's times). */
  recordedAt?: Date;
  recordUpdatedAt?: Date;
}

/** The images service's columns of a new claim. */
export interface CallData {
  sceneCode: string;
  imageCount: number;
}

const TABLE = 'image_calls';
const OUTBOX = DEFAULT_OUTBOX_TABLE.table;

export interface CallStoreOptions {
  clock?: Clock;
  /** Called after a statement or transaction that wrote an outbox row has committed (wakes the relay). */
  recorded?: () => void;
}

/**
 * knex access to image_calls: the shared claim table (claim, lease, take-over, release) plus the call's
 * results. Every state change is conditional on the attempt, so a lapsed owner cannot overwrite a take-over.
 * Storing or rewriting the results writes the call's task record to the outbox in the same statement or
 * transaction (`vision.image-calls`, call-record.ts).
 */
export class CallStore extends ClaimTable<CallRecord, CallData> {
  private readonly clock: Clock;
  private readonly recorded: () => void;

  constructor(knex: Knex, opts: CallStoreOptions = {}) {
    super(knex, TABLE, 'idempotency_key');
    this.clock = opts.clock ?? systemClock;
    this.recorded = opts.recorded ?? (() => undefined);
  }

  claim(c: NewClaim & CallData): Promise<boolean> {
    return this.insertClaim(c, {
      scene_code: c.sceneCode,
      image_count: c.imageCount,
      created_at: c.createdAt,
    });
  }

  protected toRecord(r: Record<string, unknown>): CallRecord {
    const results = typeof r.results === 'string' ? (JSON.parse(r.results) as unknown) : r.results;
    return {
      ...this.base(r),
      sceneCode: String(r.scene_code),
      imageCount: Number(r.image_count),
      results: Array.isArray(results) ? (results as ImageResult[]) : undefined,
      units: r.units === null || r.units === undefined ? undefined : Number(r.units),
      leaseId: typeof r.lease_id === 'string' ? r.lease_id : undefined,
      createdAt: new Date(r.created_at as string | Date),
      completedAt: r.completed_at ? new Date(r.completed_at as string | Date) : undefined,
      recordedAt: optionalDate(r.recorded_at),
      recordUpdatedAt: optionalDate(r.record_updated_at),
    };
  }

  /**
   * Stores the results, the units to charge and the quota lease they are charged to (running -> settling),
   * and writes the call's task record to the outbox, in one statement (the record takes its scene from the
   * row); false when the call was taken over meanwhile (nothing written).
   */
  async storeResults(
    ref: ClaimRef,
    results: ImageResult[],
    units: number,
    leaseId: string,
  ): Promise<boolean> {
    const at = this.clock.now();
    const update = this.at(ref)
      .where({ state: 'running' })
      .update({
        results: JSON.stringify(results),
        units,
        lease_id: leaseId,
        state: 'settling',
        recorded_at: at,
        record_updated_at: at,
      })
      .returning(['task_id', 'scene_code'])
      .toSQL();
    const row = recordRow(imageTaskRecord(ref, '', results, at, at), at);
    const cols = Object.keys(row);
    const values = cols.map((c) =>
      c === DEFAULT_OUTBOX_TABLE.payload
        ? `cast(? as jsonb) || jsonb_build_object('scene_code', upd.scene_code)`
        : '?',
    );
    const stored = (await this.knex.raw(
      `with upd as (${update.sql}), ev as (
         insert into ?? (${cols.map(() => '??').join(', ')}) select ${values.join(', ')} from upd
       )
       select task_id from upd`,
      [...update.bindings, OUTBOX, ...cols, ...Object.values(row)],
    )) as { rows: unknown[] };
    if (stored.rows.length !== 1) return false;
    this.recorded();
    return true;
  }

  /**
   * Replaces the stored results and units of a settling call (images quota did not grant), and writes the
   * rewritten task record to the outbox, in one transaction.
   */
  async replaceResults(ref: ClaimRef, results: ImageResult[], units: number): Promise<void> {
    const at = this.clock.now();
    const written = await this.knex.transaction(async (trx) => {
      const rows = (await this.at(ref, trx)
        .where({ state: 'settling' })
        .update({ results: JSON.stringify(results), units, record_updated_at: at })
        .returning(['scene_code', 'recorded_at'])) as Record<string, unknown>[];
      if (rows.length !== 1) return false;
      const createdAt = optionalDate(rows[0].recorded_at) ?? at;
      const record = imageTaskRecord(ref, String(rows[0].scene_code), results, createdAt, at);
      await trx(OUTBOX).insert(recordRow(record, at));
      return true;
    });
    if (written) this.recorded();
  }

  /**
   * The task record of the caller's call `taskId` once its results are stored (settling or completed);
   * undefined for a call still running, another subject's call or an unknown task id.
   */
  async taskRecord(subject: string, taskId: string): Promise<ImageTaskRecord | undefined> {
    const row = (await this.knex(TABLE)
      .where({ task_id: taskId, subject })
      .whereIn('state', ['settling', 'completed'])
      .first()) as Record<string, unknown> | undefined;
    const rec = row ? this.toRecord(row) : undefined;
    if (!rec?.results) return undefined;
    const createdAt = rec.recordedAt ?? rec.completedAt ?? rec.createdAt;
    return imageTaskRecord(rec, rec.sceneCode, rec.results, createdAt, rec.recordUpdatedAt ?? createdAt);
  }

  /** The quota hold is settled: the call is completed. */
  complete(ref: ClaimRef, at: Date): Promise<void> {
    return this.markCompleted(ref, { completed_at: at });
  }

  /** Deletes call records created before `cutoff`; returns how many. */
  async deleteOlderThan(cutoff: Date, limit: number): Promise<number> {
    const keys = (await this.knex(TABLE)
      .select('task_id')
      .where('created_at', '<', cutoff)
      .orderBy('created_at')
      .limit(limit)) as { task_id: string }[];
    if (keys.length === 0) return 0;
    const deleted = await this.knex(TABLE)
      .whereIn(
        'task_id',
        keys.map((k) => k.task_id),
      )
      .delete()
      .returning('task_id');
    return deleted.length;
  }
}

function optionalDate(v: unknown): Date | undefined {
  return v === null || v === undefined ? undefined : new Date(v as string | Date);
}
