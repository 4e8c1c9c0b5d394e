import type { Clock, Knex, Logger, RuleSet } from '@vision/shared';
import {
  AnalyticsEngine,
  analyticsFrameOf,
  type AnalyticsEvent,
  type EngineGeometry,
  type EngineSnapshot,
} from '../domain/analytics';
import type { FrameZones } from '../domain/frames';
import { analyticsWebhookEvent } from '../domain/webhooks/events';
import type { AnalyticsRecord, AnalyticsStore } from '../store/analytics-store';
import type { FramesStore } from '../store/frames-store';
import type { TasksStore } from '../store/tasks-store';
import { fanOut, type FanoutDeps } from '../workers/webhook-fanout';
import { WorkSlices } from './work-slices';
import { withEvidence } from '../domain/evidence/decorate';
import type { StoredFrame } from '../domain/frames';
import {
  dropReplaced,
  evidenceById,
  NO_EVIDENCE,
  takeStepEvidence,
  type EvidenceDeps,
} from './evidence-step';

/** A task's rules as announced on vision.task-events. */
export interface RulesNotice {
  taskId: string;
  version: number;
  /** The digest of the version's rule set (rulesDigest). */
  digest: string;
  /** The set itself, when the event brought it; otherwise results holds it from an earlier event of the task. */
  rules?: RuleSet;
  /**
   * True when the rules were in force from the task's first frame (created with them); false for a
   * replacement, which holds from the frames stored after it was announced.
   */
  fromStart: boolean;
}

export interface AnalyticsRunnerDeps {
  store: AnalyticsStore;
  frames: FramesStore;
  tasks: TasksStore;
  fanout: FanoutDeps;
  clock: Clock;
  logger: Logger;
  /** Frames evaluated per transaction. */
  pageSize?: number;
  /** The pictures of events and tracks (docs/EVIDENCE.md); absent: none is taken. */
  evidence?: EvidenceDeps;
}

/**
 * The geometry a task's evaluation runs under (docs/ANALYTICS.md, "Tasks evaluated before"): that of its stored
 * snapshot, which is 'normalized' for one written before 'pixels' existed; 'pixels' for a task not evaluated yet.
 */
export function geometryOf(rec: AnalyticsRecord | null | undefined): EngineGeometry {
  return rec?.snapshot ? (rec.snapshot.geometry ?? 'normalized') : 'pixels';
}

/** The engine a record holds: its snapshot, or a new one at the record's rules and version. */
export function engineOf(rec: AnalyticsRecord): AnalyticsEngine {
  return rec.snapshot
    ? AnalyticsEngine.restore(rec.snapshot, rec.rules)
    : AnalyticsEngine.create(rec.taskId, rec.rules, rec.rulesVersion);
}

/** The snapshot of an engine that has seen the task up to `seq` (at `mediaMs`) and starts `rules` after it. */
function startingAfter(n: RulesNotice, seq: number, mediaMs: number): EngineSnapshot {
  return {
    format: 1,
    task_id: n.taskId,
    rules_version: n.version,
    as_of_seq: seq,
    media_ms: mediaMs,
    geometry: 'pixels',
    versions: [],
    zones: [],
    lines: [],
  };
}

/**
 * Evaluates each task's zones and lines over its stored frames, in seq order, once (docs/ANALYTICS.md,
 * "Through the service"). Every step (a page of frames, or a rules change) writes its events, the frames'
 * annotations, the engine's snapshot and the events' webhook deliveries in one transaction, so a process killed
 * at any point resumes from the last snapshot and decides the same events with the same ids again: none lost,
 * none twice. Steps of one task run one after the other in this process; another process's concurrent step
 * fails the later write (AnalyticsConflict) and that batch is delivered again.
 */
export class AnalyticsRunner {
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly pageSize: number;

  constructor(private readonly deps: AnalyticsRunnerDeps) {
    this.pageSize = deps.pageSize ?? 500;
  }

  private locked<T>(taskId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(taskId) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.chains.set(taskId, tail);
    void tail.then(() => {
      if (this.chains.get(taskId) === tail) this.chains.delete(taskId);
    });
    return run;
  }

  /** After frames of `taskIds` (tasks with rules: FrameWriter answers which) were stored: evaluates them. */
  async framesStored(taskIds: string[]): Promise<void> {
    for (const id of taskIds) await this.locked(id, () => this.catchUp(id));
  }

  /** A task's rules were announced: records them, or evaluates the frames under the old ones and replaces them. */
  async rulesAnnounced(n: RulesNotice): Promise<void> {
    const { store, frames, clock, logger } = this.deps;
    await this.locked(n.taskId, async () => {
      if (n.rules) await store.keepRules(n.taskId, n.digest, n.rules);
      const rec = await store.get(n.taskId);
      if (rec && n.version <= rec.rulesVersion) return;
      const owner = await this.deps.tasks.get(n.taskId);
      void this.deps.evidence?.capture.arm(n.taskId, owner?.meta?.subject ?? 'results');
      const rules = n.rules ?? (await store.rulesOf(n.taskId, n.digest));
      if (!rules) {
        logger.warn(
          { task_id: n.taskId, rules_version: n.version },
          'a rules version whose set no event brought: not evaluated',
        );
        return;
      }
      if (!rec) {
        let snapshot: EngineSnapshot | null = null;
        if (!n.fromStart) {
          const last = await frames.lastSeq(n.taskId);
          if (last >= 0) {
            const [frame] = await frames.page(n.taskId, last - 1, 1);
            snapshot = startingAfter(n, last, frame?.frameTimeMs ?? 0);
          }
        }
        await store.create(n.taskId, n.version, n.digest, snapshot, clock.now());
        await this.catchUp(n.taskId);
        return;
      }
      const current = await this.catchUp(n.taskId, rec);
      const engine = engineOf(current);
      const events = engine.replaceRules(rules, n.version);
      await this.write(current, engine, events, [], { version: n.version, digest: n.digest });
    });
  }

  /** Evaluates the stored frames after the engine's last one, page by page; returns the record as written. */
  private async catchUp(taskId: string, known?: AnalyticsRecord): Promise<AnalyticsRecord> {
    const rec = known ?? (await this.deps.store.get(taskId));
    if (!rec) throw new Error(`task ${taskId} has no analytics`);
    let cur = rec;
    for (;;) {
      const engine = engineOf(cur);
      const page = await this.deps.frames.page(taskId, engine.lastSeq ?? -1, this.pageSize);
      if (page.length === 0) return cur;
      const events: AnalyticsEvent[] = [];
      const annotated: { seq: number; zones: FrameZones }[] = [];
      const evaluated: StoredFrame[] = [];
      // Evaluated in slices that yield to the event loop, as a replay is: other calls are served meanwhile.
      const slices = new WorkSlices(engine.rules);
      for (const f of page) {
        const out = engine.processFrame(analyticsFrameOf(f));
        await slices.done(f.objects.length);
        if (out.skipped) continue;
        events.push(...out.events);
        annotated.push({ seq: f.seq, zones: { o: out.objects.map((o) => o.zones), z: out.zones } });
        evaluated.push(f);
      }
      cur = await this.write(cur, engine, events, annotated, undefined, evaluated);
      if (page.length < this.pageSize) return cur;
    }
  }

  private async write(
    rec: AnalyticsRecord,
    engine: AnalyticsEngine,
    events: AnalyticsEvent[],
    frames: { seq: number; zones: FrameZones }[],
    rules?: { version: number; digest: string },
    page: StoredFrame[] = [],
  ): Promise<AnalyticsRecord> {
    const { store, tasks, clock, fanout, logger, evidence } = this.deps;
    const now = clock.now();
    const snapshot = engine.snapshot();
    const pictures = evidence !== undefined && (events.length > 0 || page.length > 0);
    const subject = events.length > 0 || pictures ? (await tasks.get(rec.taskId))?.meta?.subject : undefined;
    if (events.length > 0 && subject === undefined)
      logger.warn({ task_id: rec.taskId }, 'analytics events of a task whose owner is unknown: no webhooks');
    // The pictures first, under keys of their own: the rows below name only pictures that are stored.
    const ev =
      evidence && pictures
        ? await takeStepEvidence(evidence, rec.taskId, subject ?? 'results', events, page, rec.rules)
        : NO_EVIDENCE;
    const shown = evidenceById(ev);
    await store.write(
      {
        taskId: rec.taskId,
        rev: rec.rev,
        ...(rules ? { rules } : {}),
        snapshot,
        events,
        frames,
      },
      rec.eventsCount,
      now,
      async (trx: Knex) => {
        await evidence?.store.write(trx, rec.taskId, ev.snaps, ev.bests);
        if (subject !== undefined)
          await fanOut(
            fanout,
            events.map((e) => ({
              ...analyticsWebhookEvent(withEvidence(e, shown.get(e.id)), subject, now),
              traceHeaders: null,
            })),
            trx,
          );
      },
    );
    if (evidence) await dropReplaced(evidence, rec.taskId, ev);
    if (events.length > 0) fanout.wake();
    return {
      ...rec,
      ...(rules ? { rulesVersion: rules.version, rulesDigest: rules.digest } : {}),
      rules: engine.rules,
      snapshot,
      eventsCount: rec.eventsCount + events.length,
      rev: rec.rev + 1,
    };
  }
}
