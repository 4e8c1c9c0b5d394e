/** The task row and its mapping from the database (tasks service schema, store/migrations.ts). */
import type { RuleSet } from '@vision/shared';
import type { TaskStatus } from '../domain/state-machine';

export type TaskKind = 'video' | 'image';
export type SourceType = 'stream' | 'file';

export interface TaskRow {
  task_id: string;
  subject: string;
  kind: TaskKind;
  source_type: SourceType | null;
  request_id: string;
  scene_code: string;
  status: TaskStatus;
  reason: string | null;
  business_threshold: number;
  lower_bound: number;
  stream_url: string | null;
  stream_url_redacted: string | null;
  object_key: string | null;
  object_sha256: string | null;
  object_size: number | null;
  results_summary: unknown;
  stop_requested: boolean;
  abandoned: boolean;
  announced: boolean;
  refund_pending: boolean;
  created_at: Date;
  updated_at: Date;
  result_expires_at: Date;
  expired_at: Date | null;
  /** Set while a file task waits in the queue for an inference slot (status submitting). */
  queued_at: Date | null;
  /** Times the task's job was started again after the backend lost it (domain/lost-job.ts). */
  job_restarts: number;
  job_restarted_at: Date | null;
  /**
   * The digest of the zones and lines in force (docs/ANALYTICS.md), their content stored once in
   * task_rule_sets (TaskRulesStore); null while the task never had any.
   */
  rules_digest: string | null;
  /** Their version: 0 while the task never had rules, then 1, 2, ... one per change. */
  rules_version: number;
}

export interface NewVideoTask {
  task_id: string;
  subject: string;
  request_id: string;
  scene_code: string;
  business_threshold: number;
  lower_bound: number;
  source_type: SourceType;
  stream_url?: string;
  stream_url_redacted?: string;
  object_key?: string;
  object_sha256?: string;
  object_size?: number;
  /** Results are kept this many days from the creation instant (SPEC 8). */
  retention_days: number;
  /** Zones and lines given at creation (not empty): rules version 1. */
  rules?: RuleSet;
}

export type InsertOutcome =
  { kind: 'created'; task: TaskRow } | { kind: 'lost' } | { kind: 'too_many_active'; active: number };

/** The columns of tasks' outbox table (its relay is the shared OutboxRelay). */
export const TASKS_OUTBOX = {
  table: 'outbox',
  key: 'msg_key',
  payload: 'value',
  sentAt: 'published_at',
  claimedUntil: 'claimed_until',
  headers: 'headers',
};

export interface TaskEvent {
  schema: 1;
  event_id: string;
  /** `task.rules_changed`: the zones and lines were replaced (no change of status). */
  type: 'task.created' | 'task.status_changed' | 'task.rules_changed';
  task_id: string;
  subject: string;
  kind: TaskKind;
  scene_code: string;
  status: TaskStatus | string;
  business_threshold: number;
  lower_bound: number;
  result_expires_at: string;
  occurred_at: string;
  /** The creating request's idempotency key. */
  request_id?: string;
  /** The status before this change (absent on an image record). */
  previous_status?: string;
  /** Reason code (packages/shared task-reasons) of a task that ended failed or refunded. */
  reason?: string;
  /** Image calls: images carried, succeeded and failed. */
  images?: { total: number; succeeded: number; failed: number };
  /** Video tasks that have or had zones or lines: the version in force and the digest of its rule set. */
  rules_version?: number;
  rules_digest?: string;
  /**
   * The rule set itself, on the events that bring a set the task never had before (its creation's, or a
   * replacement by new content); any other event names it by `rules_digest` only.
   */
  rules?: RuleSet;
}

function toDate(v: unknown): Date {
  return v instanceof Date ? v : new Date(String(v));
}

export function rowToTask(r: Record<string, unknown>): TaskRow {
  return {
    ...(r as unknown as TaskRow),
    business_threshold: Number(r.business_threshold),
    lower_bound: Number(r.lower_bound),
    object_size: r.object_size === null || r.object_size === undefined ? null : Number(r.object_size),
    created_at: toDate(r.created_at),
    updated_at: toDate(r.updated_at),
    result_expires_at: toDate(r.result_expires_at),
    expired_at: r.expired_at ? toDate(r.expired_at) : null,
    queued_at: r.queued_at ? toDate(r.queued_at) : null,
    job_restarts: Number(r.job_restarts ?? 0),
    job_restarted_at: r.job_restarted_at ? toDate(r.job_restarted_at) : null,
    rules_digest: typeof r.rules_digest === 'string' ? r.rules_digest : null,
    rules_version: Number(r.rules_version ?? 0),
  };
}

export const ACTIVE: TaskStatus[] = ['submitting', 'resolving', 'running', 'stopping'];
