import type { Knex } from '@vision/shared';
import type { CallState } from '../domain/idempotency';
import type { ImageResult } from '../domain/results';

export interface CallRecord {
  subject: string;
  idempotencyKey: string;
  taskId: string;
  fingerprint: string;
  sceneCode: string;
  state: CallState;
  attempt: number;
  leaseUntil: Date;
  imageCount: number;
  results?: ImageResult[];
  units?: number;
  createdAt: Date;
  completedAt?: Date;
}

interface Row {
  subject: string;
  idempotency_key: string;
  task_id: string;
  fingerprint: string;
  scene_code: string;
  state: string;
  attempt: number;
  lease_until: Date | string;
  image_count: number;
  results: unknown;
  units: number | null;
  created_at: Date | string;
  completed_at: Date | string | null;
}

const TABLE = 'image_calls';

function toRecord(r: Row): CallRecord {
  const results = typeof r.results === 'string' ? (JSON.parse(r.results) as unknown) : r.results;
  return {
    subject: r.subject,
    idempotencyKey: r.idempotency_key,
    taskId: r.task_id,
    fingerprint: r.fingerprint,
    sceneCode: r.scene_code,
    state: r.state as CallState,
    attempt: r.attempt,
    leaseUntil: new Date(r.lease_until),
    imageCount: r.image_count,
    results: Array.isArray(results) ? (results as ImageResult[]) : undefined,
    units: r.units ?? undefined,
    createdAt: new Date(r.created_at),
    completedAt: r.completed_at ? new Date(r.completed_at) : undefined,
  };
}

/** knex access to image_calls. Every state change is conditional on the attempt, so a lapsed owner cannot overwrite a take-over. */
export class CallStore {
  constructor(private readonly knex: Knex) {}

  /** Inserts a new running call; false when the key already has a record. */
  async claim(rec: {
    subject: string;
    idempotencyKey: string;
    taskId: string;
    fingerprint: string;
    sceneCode: string;
    imageCount: number;
    leaseUntil: Date;
    createdAt: Date;
  }): Promise<boolean> {
    const rows = await this.knex(TABLE)
      .insert({
        subject: rec.subject,
        idempotency_key: rec.idempotencyKey,
        task_id: rec.taskId,
        fingerprint: rec.fingerprint,
        scene_code: rec.sceneCode,
        state: 'running',
        attempt: 0,
        lease_until: rec.leaseUntil,
        image_count: rec.imageCount,
        created_at: rec.createdAt,
      })
      .onConflict(['subject', 'idempotency_key'])
      .ignore()
      .returning('task_id');
    return rows.length === 1;
  }

  async get(subject: string, idempotencyKey: string): Promise<CallRecord | undefined> {
    const row = (await this.knex(TABLE).where({ subject, idempotency_key: idempotencyKey }).first()) as
      Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Takes over a running call whose lease lapsed; true when this caller won it (attempt becomes attempt + 1). */
  async takeOver(
    subject: string,
    idempotencyKey: string,
    attempt: number,
    now: Date,
    leaseUntil: Date,
  ): Promise<boolean> {
    const n = await this.knex(TABLE)
      .where({ subject, idempotency_key: idempotencyKey, attempt, state: 'running' })
      .andWhere('lease_until', '<=', now)
      .update({ attempt: attempt + 1, lease_until: leaseUntil });
    return n === 1;
  }

  /** Takes a lapsed settling call to finish it; true when this caller won it. */
  async takeSettling(
    subject: string,
    idempotencyKey: string,
    attempt: number,
    now: Date,
    leaseUntil: Date,
  ): Promise<boolean> {
    const n = await this.knex(TABLE)
      .where({ subject, idempotency_key: idempotencyKey, attempt, state: 'settling' })
      .andWhere('lease_until', '<=', now)
      .update({ lease_until: leaseUntil });
    return n === 1;
  }

  async renewLease(
    subject: string,
    idempotencyKey: string,
    attempt: number,
    leaseUntil: Date,
  ): Promise<void> {
    await this.knex(TABLE)
      .where({ subject, idempotency_key: idempotencyKey, attempt })
      .whereIn('state', ['running', 'settling'])
      .update({ lease_until: leaseUntil });
  }

  /** Stores the results and the units to settle; false when the call was taken over meanwhile. */
  async markSettling(
    subject: string,
    idempotencyKey: string,
    attempt: number,
    results: ImageResult[],
    units: number,
  ): Promise<boolean> {
    const n = await this.knex(TABLE)
      .where({ subject, idempotency_key: idempotencyKey, attempt, state: 'running' })
      .update({ state: 'settling', results: JSON.stringify(results), units });
    return n === 1;
  }

  /** Replaces the stored results and units of a settling call (images quota did not grant). */
  async replaceResults(
    subject: string,
    idempotencyKey: string,
    attempt: number,
    results: ImageResult[],
    units: number,
  ): Promise<void> {
    await this.knex(TABLE)
      .where({ subject, idempotency_key: idempotencyKey, attempt, state: 'settling' })
      .update({ results: JSON.stringify(results), units });
  }

  async markCompleted(subject: string, idempotencyKey: string, attempt: number, at: Date): Promise<void> {
    await this.knex(TABLE)
      .where({ subject, idempotency_key: idempotencyKey, attempt, state: 'settling' })
      .update({ state: 'completed', completed_at: at });
  }

  /** Forgets a running call that ended in a request-level error, so that the key can be used again. */
  async release(subject: string, idempotencyKey: string, attempt: number): Promise<void> {
    await this.knex(TABLE)
      .where({ subject, idempotency_key: idempotencyKey, attempt, state: 'running' })
      .delete();
  }

  /** Settling calls whose owner's lease lapsed (crash between storing results and settling). */
  async lapsedSettling(now: Date, limit: number): Promise<CallRecord[]> {
    const rows = (await this.knex(TABLE)
      .where({ state: 'settling' })
      .andWhere('lease_until', '<=', now)
      .orderBy('lease_until')
      .limit(limit)) as Row[];
    return rows.map(toRecord);
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
