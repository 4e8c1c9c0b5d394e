/**
 * The claims of create requests' Idempotency-Keys in `idempotency_keys`: the shared claim table
 * (packages/shared idempotency/claim-table.ts) over this service's table. The claim becomes `settling` in
 * the transaction that writes its task (TaskStore.insertSubmitting) and `completed` once the task left
 * `submitting` or joined the queue.
 */
import { ClaimTable, type ClaimRecord, type Knex, type NewClaim } from '@vision/shared';

export const CLAIMS_TABLE = 'idempotency_keys';

export class TaskClaims extends ClaimTable<ClaimRecord, object> {
  constructor(knex: Knex) {
    super(knex, CLAIMS_TABLE, 'idem_key');
  }

  claim(c: NewClaim): Promise<boolean> {
    return this.insertClaim(c, { created_at: c.createdAt });
  }

  protected toRecord(r: Record<string, unknown>): ClaimRecord {
    return this.base(r);
  }
}
