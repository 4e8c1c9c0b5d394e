import { ClaimTable, type ClaimRecord, type ClaimRef, type Knex, type NewClaim } from '@vision/shared';
import type { ImageResult } from '../domain/results';

/** An image call: the claim of its Idempotency-Key (packages/shared idempotency) and its stored results. */
export interface CallRecord extends ClaimRecord {
  sceneCode: string;
  imageCount: number;
  results?: ImageResult[];
  units?: number;
  createdAt: Date;
  completedAt?: Date;
}

/** The images service's columns of a new claim. */
export interface CallData {
  sceneCode: string;
  imageCount: number;
}

const TABLE = 'image_calls';

/**
 * knex access to image_calls: the shared claim table (claim, lease, take-over, release) plus the call's
 * results. Every state change is conditional on the attempt, so a lapsed owner cannot overwrite a take-over.
 */
export class CallStore extends ClaimTable<CallRecord, CallData> {
  constructor(knex: Knex) {
    super(knex, TABLE, 'idempotency_key');
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
      createdAt: new Date(r.created_at as string | Date),
      completedAt: r.completed_at ? new Date(r.completed_at as string | Date) : undefined,
    };
  }

  /** Stores the results and the units to settle (running -> settling); false when the call was taken over meanwhile. */
  storeResults(ref: ClaimRef, results: ImageResult[], units: number): Promise<boolean> {
    return this.markSettling(ref, { results: JSON.stringify(results), units });
  }

  /** Replaces the stored results and units of a settling call (images quota did not grant). */
  async replaceResults(ref: ClaimRef, results: ImageResult[], units: number): Promise<void> {
    await this.at(ref)
      .where({ state: 'settling' })
      .update({ results: JSON.stringify(results), units });
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
