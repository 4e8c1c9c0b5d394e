'use strict';
/**
 * The bus messages of a benchmark task (docs/INTERNAL.md): its task.created event, its frames and end marker.
 * Frames and ends carry tasks' job grant (results stores none without one) once useGrants names tasks' key.
 */

let grantOf = () => undefined;

/** Signs the job grant of each bench task with `signer` (tasks' identity key) through `shared`'s signJobGrant. */
function useGrants(shared, signer) {
  const grants = new Map();
  grantOf = (taskId) => {
    if (!grants.has(taskId))
      grants.set(
        taskId,
        shared.signJobGrant(signer, {
          task_id: taskId,
          job_id: taskId,
          subject: 'bench',
          scene_code: 'person_vehicle',
        }),
      );
    return grants.get(taskId);
  };
}

function frameValue(taskId, seq) {
  const objects = [];
  for (let i = 0; i < 1 + (seq % 4); i++)
    objects.push({
      label: i % 2 ? 'car' : 'person',
      score: 0.3 + ((seq * 7 + i * 13) % 70) / 100,
      bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.4, width: 0.1, height: 0.2 },
      track_id: String(i + 1),
    });
  return {
    schema: 1,
    type: 'frame',
    event_id: `${taskId}:${seq}`,
    task_id: taskId,
    seq,
    frame_id: `${taskId}-${seq}`,
    frame_time_ms: 1_767_225_600_000 + seq * 200,
    image: { width: 1280, height: 720 },
    objects,
    lower_bound: 0.3,
    grant: grantOf(taskId),
  };
}

/** The task.created event that makes a bench task readable by `subject`. */
function taskCreated(taskId, subject) {
  return {
    key: taskId,
    value: {
      schema: 1,
      event_id: `ev-${taskId}`,
      type: 'task.created',
      task_id: taskId,
      subject,
      kind: 'video',
      scene_code: 'person_vehicle',
      status: 'succeeded',
      business_threshold: 0.8,
      lower_bound: 0.3,
      result_expires_at: new Date(Date.now() + 90 * 86_400_000).toISOString(),
      occurred_at: new Date().toISOString(),
    },
  };
}

/** The end marker after a bench task's last frame. */
function endOf(taskId, frames) {
  return {
    key: taskId,
    value: {
      schema: 1,
      type: 'end',
      event_id: `${taskId}:end`,
      task_id: taskId,
      seq: frames,
      frames,
      status: 'succeeded',
      grant: grantOf(taskId),
    },
  };
}

module.exports = { useGrants, frameValue, taskCreated, endOf };
