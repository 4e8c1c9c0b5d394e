import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  MOVES,
  TASK_STATUSES,
  type TaskStatus,
  type TaskTrigger,
  canMove,
  isActive,
  isTerminal,
  stopDecision,
  transition,
  triggerForJobStatus,
} from '../../src/domain/state-machine';

/**
 * Every trigger the code declares, read from the TaskTrigger union in the source (a type has no runtime
 * value): a trigger added there joins every check below without anyone updating a list here.
 */
const TRIGGERS: TaskTrigger[] = (() => {
  const source = readFileSync(path.join(__dirname, '../../src/domain/state-machine.ts'), 'utf8');
  const union = /export type TaskTrigger =([^;]+);/.exec(source);
  if (!union) throw new Error('state-machine.ts declares no TaskTrigger union');
  return [...union[1].matchAll(/'([a-z_]+)'/g)].map((m) => m[1] as TaskTrigger);
})();

/** Every move SPEC.md section 3 states, plus our documented moves into ended states. */
const STATED: [TaskStatus, TaskTrigger, TaskStatus][] = [
  ['submitting', 'submission_accepted', 'running'],
  ['submitting', 'submission_unknown', 'resolving'],
  ['submitting', 'submission_rejected', 'refunded'],
  ['resolving', 'verified_created', 'running'],
  ['resolving', 'verified_not_created', 'refunded'],
  ['running', 'stop_requested', 'stopping'],
  ['stopping', 'stop_confirmed', 'stopped'],
  ['running', 'job_succeeded', 'succeeded'],
  ['running', 'job_failed', 'failed'],
  ['running', 'job_stopped', 'stopped'],
  ['stopping', 'job_stopped', 'stopped'],
  ['stopping', 'job_succeeded', 'succeeded'],
  ['stopping', 'job_failed', 'failed'],
  ['running', 'job_failed_ours', 'refunded'],
  ['stopping', 'job_failed_ours', 'refunded'],
];

describe('task state machine', () => {
  test.each(STATED)('%s --%s--> %s', (from, trigger, to) => {
    expect(transition(from, trigger)).toEqual({ ok: true, to });
    expect(canMove(from, to)).toBe(true);
  });

  const refused: [TaskStatus, TaskTrigger][] = [];
  for (const s of TASK_STATUSES)
    for (const t of TRIGGERS) if (!STATED.some(([f, tr]) => f === s && tr === t)) refused.push([s, t]);

  test('the triggers read from the source are the ones the moves use, and more than a few', () => {
    expect(TRIGGERS.length).toBeGreaterThanOrEqual(new Set(MOVES.map((m) => m.trigger)).size);
    for (const m of MOVES) expect(TRIGGERS).toContain(m.trigger);
  });
  test('the table covers every (state, trigger) pair', () => {
    expect(refused.length + STATED.length).toBe(TASK_STATUSES.length * TRIGGERS.length);
    expect(MOVES.length).toBe(STATED.length);
  });

  test.each(refused)('%s refuses %s', (from, trigger) => {
    expect(transition(from, trigger)).toEqual({ ok: false, reason: 'not_allowed' });
  });

  test('ended states never move again', () => {
    for (const s of ['stopped', 'succeeded', 'failed', 'refunded'] as TaskStatus[]) {
      expect(isTerminal(s)).toBe(true);
      for (const to of TASK_STATUSES) expect(canMove(s, to)).toBe(false);
    }
  });

  test('resolving and the other unfinished states hold an active slot', () => {
    expect(TASK_STATUSES.filter(isActive)).toEqual(['submitting', 'resolving', 'running', 'stopping']);
  });

  test.each<[TaskStatus, ReturnType<typeof stopDecision>]>([
    ['running', 'stop_now'],
    ['stopping', 'already_stopping'],
    ['submitting', 'defer_until_running'],
    ['resolving', 'defer_until_running'],
    ['stopped', 'not_stoppable'],
    ['succeeded', 'not_stoppable'],
    ['failed', 'not_stoppable'],
    ['refunded', 'not_stoppable'],
  ])('stop on %s: %s', (s, d) => {
    expect(stopDecision(s)).toBe(d);
  });

  test('job statuses map to triggers', () => {
    expect(triggerForJobStatus('succeeded')).toBe('job_succeeded');
    expect(triggerForJobStatus('failed')).toBe('job_failed');
    // The caller's stream or video: failed, charged. Our side: refunded.
    expect(
      triggerForJobStatus('failed', 'stream_lost: the stream was lost (after 30000 ms, stream_unreachable)'),
    ).toBe('job_failed');
    expect(triggerForJobStatus('failed', 'media_unreadable: the video could not be decoded')).toBe(
      'job_failed',
    );
    expect(triggerForJobStatus('failed', 'backend_lost_job: the inference backend lost the job')).toBe(
      'job_failed',
    );
    expect(
      triggerForJobStatus(
        'failed',
        'decoder_unavailable: the video decoder is unavailable (crashed 3 times)',
      ),
    ).toBe('job_failed_ours');
    expect(triggerForJobStatus('failed', 'internal_error: internal error')).toBe('job_failed_ours');
    expect(triggerForJobStatus('failed', 'decoder_unavailable_but_not_a_code')).toBe('job_failed');
    expect(triggerForJobStatus('stopped')).toBe('job_stopped');
    expect(triggerForJobStatus('running')).toBeUndefined();
  });
});
