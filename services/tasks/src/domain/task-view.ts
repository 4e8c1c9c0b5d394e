import { toTaskReason } from '@vision/shared';

/** The public shape of a task (SPEC.md 2.1, plus `kind` and, for ended tasks, `reason`). Pure. */
export interface TaskViewInput {
  task_id: string;
  request_id: string;
  scene_code: string;
  status: string;
  kind: string;
  reason: string | null;
  result_expires_at: Date;
  created_at: Date;
  updated_at: Date;
  /** Video tasks: 0 while the task never had zones or lines. */
  rules_version?: number;
}

export interface PublicTask {
  task_id: string;
  request_id: string;
  scene_code: string;
  status: string;
  result_expires_at: string;
  created_at: string;
  updated_at: string;
  kind: string;
  reason?: string;
  rules_version?: number;
}

export function toPublicTask(t: TaskViewInput): PublicTask {
  const view: PublicTask = {
    task_id: t.task_id,
    request_id: t.request_id,
    scene_code: t.scene_code,
    status: t.status,
    result_expires_at: t.result_expires_at.toISOString(),
    created_at: t.created_at.toISOString(),
    updated_at: t.updated_at.toISOString(),
    kind: t.kind,
  };
  if (t.rules_version !== undefined && t.rules_version > 0) view.rules_version = t.rules_version;
  if (t.reason && (t.status === 'failed' || t.status === 'refunded')) view.reason = toTaskReason(t.reason); // also rows stored before the closed list
  return view;
}
