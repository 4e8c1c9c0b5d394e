import type { KeyObject } from 'node:crypto';
import {
  GROUPS,
  TOPICS,
  metrics,
  verifyJobGrant,
  parseRules,
  rulesDigest,
  type Bus,
  type RuleSet,
  type Clock,
  type IncomingMessage,
  type Logger,
  type Subscription,
} from '@vision/shared';
import { toStoredFrame, type StoredFrame } from '../domain/frames';
import { FenceWalk } from '../domain/job-fence';
import { parseFramesTopicMessage, parseTaskEvent, type TaskEvent } from '../domain/messages';
import type { EndMarker } from '../domain/task-meta';
import type { FrameWriter } from './frame-writer';
import type { FramesStore } from '../store/frames-store';
import type { JobFencesStore } from '../store/job-fences-store';
import type { TasksStore } from '../store/tasks-store';
import type { AnalyticsRunner, RulesNotice } from '../use-cases/run-analytics';

/** Consumer group of the results service on both topics. */
export const RESULTS_GROUP = GROUPS.results;

export interface IngestDeps {
  frames: FramesStore;
  /** Shared by all partitions' handlers: frames handled at the same time are written together. */
  writer: FrameWriter;
  tasks: TasksStore;
  clock: Clock;
  logger: Logger;
  /** Evaluates zones and lines over the stored frames (docs/ANALYTICS.md). */
  analytics?: AnalyticsRunner;
  /** Tasks' public key: frames and ends are stored only under tasks' grant for their task (job-grant.ts). */
  grantKey: KeyObject;
  /** The fences of jobs' owners: a replica that lost a job has its messages dropped (domain/job-fence.ts). */
  fences: JobFencesStore;
}

/**
 * Whether a message of `vision.frames` carries tasks' grant for its own task. One that does not (a publisher
 * other than the job tasks started, or a job publishing for another task) is dropped, counted and logged
 * (never the grant itself).
 */
function granted(deps: IngestDeps, m: IncomingMessage, taskId: string, grant: unknown): boolean {
  const check = verifyJobGrant(deps.grantKey, grant, taskId);
  if (check.ok) return true;
  metrics.framesRefused.inc({ reason: check.reason });
  deps.logger.warn(
    { topic: m.topic, partition: m.partition, offset: m.offset, task_id: taskId, reason: check.reason },
    'dropping a frames message without a grant for its task',
  );
  return false;
}

function skip(logger: Logger, m: IncomingMessage, problem: string): void {
  logger.warn(
    { topic: m.topic, partition: m.partition, offset: m.offset, key: m.key, problem },
    'skipping a message results cannot use',
  );
}

/**
 * Handles one batch of `vision.frames`: its frames go into one multi-row INSERT, shared with the
 * batches of other partitions handled at the same moment (FrameWriter); a redelivered frame conflicts
 * on (task_id, seq) and is stored once. Then the end markers. A batch
 * that fails is redelivered by the bus; a message that can never be stored is logged and skipped so it
 * cannot block its partition.
 */
export function framesBatchHandler(deps: IngestDeps): (messages: IncomingMessage[]) => Promise<void> {
  return async (messages) => {
    const frames = new Map<string, StoredFrame>();
    const ends = new Map<string, EndMarker>();
    const captured: number[] = [];
    const parsed = messages.map((m) => ({ m, p: parseFramesTopicMessage(m.value) }));
    const taskIds = new Set<string>();
    for (const { p } of parsed)
      if (p.kind !== 'invalid')
        taskIds.add(
          p.kind === 'frame' ? p.frame.task_id : p.kind === 'end' ? p.end.task_id : p.owner.task_id,
        );
    const walk = new FenceWalk(await deps.fences.read([...taskIds]));
    for (const { m, p } of parsed) {
      if (p.kind === 'invalid') {
        skip(deps.logger, m, p.problem);
        continue;
      }
      const msg = p.kind === 'frame' ? p.frame : p.kind === 'end' ? p.end : p.owner;
      if (!granted(deps, m, msg.task_id, msg.grant)) continue;
      if (!walk.admit(msg.task_id, msg.epoch)) {
        metrics.framesRefused.inc({ reason: 'stale_owner' });
        continue;
      }
      if (p.kind === 'frame') {
        const f = toStoredFrame(p.frame);
        frames.set(`${f.taskId}\u0000${f.seq}`, f);
        if (p.frame.captured_at_ms) captured.push(p.frame.captured_at_ms);
      } else if (p.kind === 'end') ends.set(p.end.task_id, { frames: p.end.frames, status: p.end.status });
    }
    await deps.fences.raise(walk.changed());
    const withRules = await deps.writer.write([...frames.values()]);
    // Wall clock on both sides (the capture stamp is the inference process's Date.now()).
    const storedAt = Date.now();
    for (const at of captured) metrics.ingestLag.observe({}, Math.max(0, storedAt - at) / 1000);
    const now = deps.clock.now();
    // After the frames: a stored end marker means every frame before it is stored too.
    for (const [taskId, end] of ends) await deps.tasks.markEnded(taskId, end, now);
    // Before the batch is committed: a crash here delivers it again, and the frames are evaluated then.
    const evaluate = [...new Set([...frames.values()].map((f) => f.taskId))].filter((id) =>
      withRules.has(id),
    );
    if (evaluate.length > 0) await deps.analytics?.framesStored(evaluate);
  };
}

/**
 * The rules announcement of a video task's event: its version and the digest of its set, and the set when the
 * event brings it (parseRules checks it, and it must be the set the digest names). An event of an earlier
 * release carries the set without its digest.
 */
function rulesNotice(e: TaskEvent): RulesNotice | { problem: string } {
  let rules: RuleSet | undefined;
  if (e.rules !== undefined) {
    const parsed = parseRules(e.rules);
    if (!parsed.ok) return { problem: `rules: ${parsed.error.message}` };
    rules = parsed.rules;
  }
  const digest = e.rules_digest ?? (rules ? rulesDigest(rules) : undefined);
  if (digest === undefined) return { problem: 'rules: neither a set nor its digest' };
  if (rules && rulesDigest(rules) !== digest)
    return { problem: 'rules: the set is not the one its digest names' };
  return {
    taskId: e.task_id,
    version: e.rules_version ?? 0,
    digest,
    ...(rules ? { rules } : {}),
    // Events of one task arrive in order: a version first seen on any other event is the creation's.
    fromStart: e.type !== 'task.rules_changed',
  };
}

/** Handles one batch of `vision.task-events`: ownership, thresholds, retention and status per task. */
export function taskEventsBatchHandler(deps: IngestDeps): (messages: IncomingMessage[]) => Promise<void> {
  return async (messages) => {
    const now = deps.clock.now();
    for (const m of messages) {
      const parsed = parseTaskEvent(m.value);
      if (!parsed.ok) {
        skip(deps.logger, m, parsed.problem);
        continue;
      }
      const e = parsed.event;
      await deps.tasks.upsertMeta(
        {
          taskId: e.task_id,
          subject: e.subject,
          kind: e.kind,
          sceneCode: e.scene_code,
          status: e.status,
          businessThreshold: e.business_threshold,
          lowerBound: e.lower_bound,
          resultExpiresAt: new Date(e.result_expires_at),
          statusAt: new Date(e.occurred_at),
          source: 'event',
        },
        now,
      );
      if (e.kind === 'video' && e.rules_version !== undefined && e.rules_version > 0 && deps.analytics) {
        const notice = rulesNotice(e);
        if ('problem' in notice) skip(deps.logger, m, notice.problem);
        else await deps.analytics.rulesAnnounced(notice);
      }
    }
  };
}

/** Subscribes the results consumer group to both topics. */
export async function subscribeIngest(bus: Bus, deps: IngestDeps): Promise<Subscription[]> {
  const subs: Subscription[] = [];
  try {
    subs.push(
      await bus.subscribe({
        topic: TOPICS.taskEvents,
        group: RESULTS_GROUP,
        fromBeginning: true,
        handleBatch: taskEventsBatchHandler(deps),
      }),
    );
    subs.push(
      await bus.subscribe({
        topic: TOPICS.frames,
        group: RESULTS_GROUP,
        fromBeginning: true,
        handleBatch: framesBatchHandler(deps),
      }),
    );
  } catch (err) {
    await Promise.allSettled(subs.map((s) => s.close()));
    throw err;
  }
  return subs;
}
