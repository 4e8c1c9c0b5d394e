/**
 * The claim of an Idempotency-Key in a service's own table (knex; Postgres or PGlite): the store port of
 * the claim driver (claims.ts). Each service's table has the columns `subject`, its key column, `task_id`,
 * `fingerprint`, `state`, `attempt` and `lease_until`, with a unique key on (subject, key column); the
 * service adapter extends ClaimTable with its own columns and steps. Every change after the insert is
 * conditional on the attempt, so an owner whose lease lapsed cannot overwrite the one that took over.
 */
import type { Knex } from 'knex';
import type { ClaimState } from './claim-decision';

/** One claim, as a service's adapter reads it (its own fields added). */
export interface ClaimRecord {
  subject: string;
  key: string;
  taskId: string;
  fingerprint: string;
  state: ClaimState;
  attempt: number;
  leaseUntil: Date;
}

/**
 * Which claim, and which attempt at it. The task id is part of it: a released key is claimed again at
 * attempt 0 under a new task id, and an owner of the old claim (alive, its lease lapsed) must not match
 * the new one.
 */
export interface ClaimRef {
  subject: string;
  key: string;
  taskId: string;
  attempt: number;
}

/** A new claim (state running, attempt 0). */
export interface NewClaim {
  subject: string;
  key: string;
  taskId: string;
  fingerprint: string;
  leaseUntil: Date;
  createdAt: Date;
}

/** What the claim driver needs from a service's store. */
export interface ClaimPort<R extends ClaimRecord, N> {
  /** Inserts a new running claim with the service's data `N`; false when the key already has one. */
  claim(c: NewClaim & N): Promise<boolean>;
  get(subject: string, key: string): Promise<R | undefined>;
  /** A lapsed running claim becomes this caller's (attempt + 1); false when another caller won it. */
  takeOver(ref: ClaimRef, now: Date, leaseUntil: Date): Promise<boolean>;
  /** A lapsed settling claim becomes this caller's to finish (same attempt); false when another won it. */
  takeSettling(ref: ClaimRef, now: Date, leaseUntil: Date): Promise<boolean>;
  renewLease(ref: ClaimRef, leaseUntil: Date): Promise<void>;
  /** Forgets a running claim (nothing was charged): the key may be used again. */
  release(ref: ClaimRef): Promise<void>;
  /** Settling claims whose owner's lease lapsed (for the sweeper). */
  lapsedSettling(now: Date, limit: number): Promise<R[]>;
}

export abstract class ClaimTable<R extends ClaimRecord, N> implements ClaimPort<R, N> {
  constructor(
    protected readonly knex: Knex,
    /** The table, and the name of its Idempotency-Key column. */
    protected readonly table: string,
    protected readonly keyColumn: string,
  ) {}

  abstract claim(c: NewClaim & N): Promise<boolean>;
  protected abstract toRecord(row: Record<string, unknown>): R;

  /** The fields every record has, from a row. */
  protected base(r: Record<string, unknown>): ClaimRecord {
    return {
      subject: String(r.subject),
      key: String(r[this.keyColumn]),
      taskId: String(r.task_id),
      fingerprint: String(r.fingerprint),
      state: String(r.state) as ClaimState,
      attempt: Number(r.attempt),
      leaseUntil: new Date(r.lease_until as string | Date),
    };
  }

  /** Inserts `row` (the service's columns) as a new running claim; false when the key has one. */
  protected async insertClaim(
    c: NewClaim,
    row: Record<string, unknown>,
    db: Knex = this.knex,
  ): Promise<boolean> {
    const rows = await db(this.table)
      .insert({
        ...row,
        subject: c.subject,
        [this.keyColumn]: c.key,
        task_id: c.taskId,
        fingerprint: c.fingerprint,
        state: 'running',
        attempt: 0,
        lease_until: c.leaseUntil,
      })
      .onConflict(['subject', this.keyColumn])
      .ignore()
      .returning('task_id');
    return rows.length === 1;
  }

  /** The claim's row at this attempt of this task (the query the conditional changes start from). */
  protected at(ref: ClaimRef, db: Knex = this.knex): Knex.QueryBuilder {
    return db(this.table).where({
      subject: ref.subject,
      [this.keyColumn]: ref.key,
      task_id: ref.taskId,
      attempt: ref.attempt,
    });
  }

  async get(subject: string, key: string): Promise<R | undefined> {
    const row = (await this.knex(this.table)
      .where({ subject, [this.keyColumn]: key })
      .first()) as Record<string, unknown> | undefined;
    return row ? this.toRecord(row) : undefined;
  }

  async takeOver(ref: ClaimRef, now: Date, leaseUntil: Date): Promise<boolean> {
    const n = await this.at(ref)
      .where({ state: 'running' })
      .andWhere('lease_until', '<=', now)
      .update({ attempt: ref.attempt + 1, lease_until: leaseUntil });
    return n === 1;
  }

  async takeSettling(ref: ClaimRef, now: Date, leaseUntil: Date): Promise<boolean> {
    const n = await this.at(ref)
      .where({ state: 'settling' })
      .andWhere('lease_until', '<=', now)
      .update({ lease_until: leaseUntil });
    return n === 1;
  }

  async renewLease(ref: ClaimRef, leaseUntil: Date): Promise<void> {
    await this.at(ref).whereIn('state', ['running', 'settling']).update({ lease_until: leaseUntil });
  }

  async release(ref: ClaimRef): Promise<void> {
    await this.at(ref).where({ state: 'running' }).delete();
  }

  /** running -> settling with the service's stored outcome `patch`; false when the claim was taken over. */
  async markSettling(
    ref: ClaimRef,
    patch: Record<string, unknown> = {},
    db: Knex = this.knex,
  ): Promise<boolean> {
    const n = await this.at(ref, db)
      .where({ state: 'running' })
      .update({ ...patch, state: 'settling' });
    return n === 1;
  }

  /** settling -> completed (with the service's `patch`): the answer is final. */
  async markCompleted(ref: ClaimRef, patch: Record<string, unknown> = {}): Promise<void> {
    await this.at(ref)
      .where({ state: 'settling' })
      .update({ ...patch, state: 'completed' });
  }

  async lapsedSettling(now: Date, limit: number): Promise<R[]> {
    const rows = (await this.knex(this.table)
      .where({ state: 'settling' })
      .andWhere('lease_until', '<=', now)
      .orderBy('lease_until')
      .limit(limit)) as Record<string, unknown>[];
    return rows.map((r) => this.toRecord(r));
  }
}
