/**
 * What to do with a request whose Idempotency-Key already has a call record (DESIGN.md 3). Pure:
 * the store supplies the record, the clock supplies `now`.
 */
export type CallState = 'running' | 'settling' | 'completed';

export interface CallRecordView {
  fingerprint: string;
  state: CallState;
  leaseUntil: Date;
}

export type ExistingCallDecision =
  /** Other scene or files under the same key: 400 idempotency_mismatch. */
  | { action: 'mismatch' }
  /** Finished: answer 200 with the stored results. */
  | { action: 'replay' }
  /** Another request is running it now: wait, then look again. */
  | { action: 'wait' }
  /** Its owner died before settling quota (lease lapsed): nothing was charged, run it again. */
  | { action: 'take_over' }
  /** Its owner stopped after storing results but before settling quota: settle, then replay. */
  | { action: 'finish' };

export function decideExisting(record: CallRecordView, fingerprint: string, now: Date): ExistingCallDecision {
  if (record.fingerprint !== fingerprint) return { action: 'mismatch' };
  if (record.state === 'completed') return { action: 'replay' };
  const lapsed = record.leaseUntil.getTime() <= now.getTime();
  // Settling: the results are final; only the quota settle may still be outstanding.
  if (record.state === 'settling') return lapsed ? { action: 'finish' } : { action: 'replay' };
  return lapsed ? { action: 'take_over' } : { action: 'wait' };
}

/** The quota hold id of attempt `attempt` (0 first) of call `taskId`: a take-over never reuses a hold. */
export function holdIdFor(taskId: string, attempt: number): string {
  return attempt === 0 ? taskId : `${taskId}-r${attempt}`;
}
