/** Every row of SPEC.md section 3, checked against the outcome table (domain/outcomes.ts) and the state machine. */
import { SUBMIT, VERIFY, stopRow, submitRow } from '../../src/domain/outcomes';
import { TERMINAL_STATUSES, transition } from '../../src/domain/state-machine';

const to = (from: Parameters<typeof transition>[0], trigger: Parameters<typeof transition>[1]) => {
  const t = transition(from, trigger);
  return t.ok ? t.to : undefined;
};

describe('SPEC.md 3, row by row', () => {
  test('(none) -> create accepted -> submitting, later running; quota charged (201)', () => {
    const row = submitRow('request', 'accepted');
    expect(row).toMatchObject({
      trigger: 'submission_accepted',
      refund: false,
      answer: { kind: 'task', status: 201 },
    });
    expect(to('submitting', row.trigger!)).toBe('running');
  });

  test('submitting -> outcome unknown -> resolving; create returns 202; not charged again, not refunded', () => {
    const row = submitRow('request', 'unknown');
    expect(row).toMatchObject({
      trigger: 'submission_unknown',
      refund: false,
      answer: { kind: 'task', status: 202 },
    });
    expect(to('submitting', row.trigger!)).toBe('resolving');
  });

  test('resolving -> verified created -> running; quota stays charged', () => {
    expect(VERIFY.created).toEqual({ trigger: 'verified_created', refund: false });
    expect(to('resolving', VERIFY.created.trigger)).toBe('running');
  });

  test('resolving -> verified not created -> refunded; automatic refund', () => {
    expect(VERIFY.not_created).toMatchObject({ trigger: 'verified_not_created', refund: true });
    expect(to('resolving', VERIFY.not_created.trigger)).toBe('refunded');
  });

  test('submitting -> backend rejects -> refunded; quota refunded', () => {
    for (const context of ['request', 'recovery'] as const) {
      const row = submitRow(context, 'rejected');
      expect(row).toMatchObject({ trigger: 'submission_rejected', refund: true });
      expect(to('submitting', row.trigger!)).toBe('refunded');
    }
  });

  test('running -> stop -> stopping, then stopped on backend confirmation; stop answers the final status', () => {
    const row = stopRow('running');
    expect(row).toEqual({ action: 'stop_now', trigger: 'stop_requested', status: 200 });
    expect(to('running', 'stop_requested')).toBe('stopping');
    expect(to('stopping', 'stop_confirmed')).toBe('stopped');
    expect(stopRow('stopping')).toEqual({ action: 'wait_for_stop', status: 200 });
  });

  test.each(TERMINAL_STATUSES)('%s -> stop -> unchanged, OP-TASK-NOT-STOPPABLE', (status) => {
    expect(stopRow(status)).toEqual({ action: 'not_stoppable', code: 'OP-TASK-NOT-STOPPABLE' });
  });
});

describe('outcomes the spec leaves to us', () => {
  test('a submission that never reached the backend: no task, charge returned, 503', () => {
    expect(submitRow('request', 'not_delivered')).toMatchObject({
      refund: true,
      answer: { kind: 'error', code: 'OP-TASK-UPSTREAM-DOWN', retryAfter: '10' },
    });
    expect(submitRow('request', 'over_capacity').answer).toMatchObject({ code: 'OP-TASK-UPSTREAM-DOWN' });
    expect(submitRow('request', 'breaker_open')).toMatchObject({
      refund: true,
      answer: { kind: 'error', code: 'OP-TASK-BREAKER-OPEN', reason: 'breaker_open' },
    });
    for (const r of ['not_delivered', 'over_capacity', 'breaker_open'] as const)
      expect(submitRow('request', r).trigger).toBeUndefined();
  });

  test('from crash recovery nobody waits: undelivered submissions end refunded with a reason', () => {
    for (const [result, reason] of [
      ['not_delivered', 'backend_unavailable'],
      ['over_capacity', 'backend_unavailable'],
      ['breaker_open', 'breaker_open'],
    ] as const)
      expect(submitRow('recovery', result)).toMatchObject({
        trigger: 'submission_rejected',
        refund: true,
        taskReason: reason,
      });
  });

  test('submitting and resolving tasks remember a stop (202)', () => {
    expect(stopRow('submitting')).toEqual({ action: 'defer_until_running', status: 202 });
    expect(stopRow('resolving')).toEqual({ action: 'defer_until_running', status: 202 });
  });

  test('the table covers every outcome in both contexts, and every move it names exists', () => {
    for (const context of ['request', 'recovery'] as const)
      for (const row of Object.values(SUBMIT[context]))
        if (row.trigger) expect(to('submitting', row.trigger)).toBeDefined();
  });
});
