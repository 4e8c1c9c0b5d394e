import { invalidRequest, REASON, rulesDigest, type RuleSet } from '@vision/shared';
import {
  AnalyticsEngine,
  analyticsFrameOf,
  type AnalyticsEvent,
  type AnalyticsSummary,
  type EngineGeometry,
  type EngineSnapshot,
} from '../domain/analytics';
import { REPLAY_WORK_BUDGET } from '../domain/analytics/replay-budget';
import type { CursorCodec } from '../domain/cursor';
import type { FramesStore } from '../store/frames-store';
import { WorkSlices } from './work-slices';

export interface ReplayOutcome {
  analytics: AnalyticsSummary;
  events: AnalyticsEvent[];
  events_total: number;
  frames: number;
  /** Where the next request goes on (the evaluation's state, sealed); `""` once the last stored frame is in. */
  next_cursor: string;
}

export interface ReplayRequest {
  maxEvents: number;
  /** Frames this request evaluates at most. */
  maxFrames: number;
  cursor?: string;
  /** Aborted when the caller has gone: the evaluation stops at its next slice. */
  signal?: AbortSignal;
}

export interface ReplayDeps {
  frames: FramesStore;
  /** Replay cursors (CursorCodec of purpose `replay`). */
  cursors: CursorCodec;
  /** Frames read per round. */
  pageSize: number;
  /** Work units per request (replay-budget.ts); REPLAY_WORK_BUDGET unless a test sets another. */
  workBudget?: number;
  /** The longest cursor; MAX_REPLAY_CURSOR unless a test sets another. */
  maxCursor?: number;
}

/**
 * The longest replay cursor: beside a rule set of RULE_LIMITS.maxBytes and the other fields, within the 1 MiB
 * request body. The cursor refers to its rules by their digest and carries only the engine's state.
 */
export const MAX_REPLAY_CURSOR = 768 * 1024;

/** What a replay cursor seals: the digest of the rules it belongs to and the engine's state (no rules). */
interface ReplayState {
  rules: string;
  engine: EngineSnapshot;
}

const invalidCursor = () =>
  invalidRequest('cursor is not a replay cursor of this task and rule set', REASON.invalid_cursor, {
    field: 'cursor',
  });

/**
 * The engine state a request starts from: a fresh one (under `geometry`, the task's own), or the one its cursor
 * seals, which carries its geometry (400 for a bad cursor).
 */
export function replayStart(
  cursors: CursorCodec,
  taskId: string,
  rules: RuleSet,
  cursor: string | undefined,
  geometry: EngineGeometry = 'pixels',
): EngineSnapshot {
  if (cursor === undefined) return AnalyticsEngine.create(taskId, rules, 1, geometry).snapshot();
  const state = cursors.openState(cursor, taskId, MAX_REPLAY_CURSOR) as ReplayState | undefined;
  if (!state || typeof state !== 'object' || state.rules !== rulesDigest(rules)) throw invalidCursor();
  try {
    AnalyticsEngine.restore(state.engine, rules);
  } catch {
    throw invalidCursor();
  }
  return state.engine;
}

/**
 * One page of a replay from `start`: at most `req.maxFrames` frames and REPLAY_WORK_BUDGET work units, yielding
 * to the event loop every SLICE_WORK units (WorkSlices). When the state at the page's end would not fit in a cursor,
 * the page is evaluated again from `start` with half the frames (the same frames give the same state), so that
 * `max_frames` always holds and every cursor fits in a request.
 */
export async function replayPage(
  deps: ReplayDeps,
  taskId: string,
  rules: RuleSet,
  start: EngineSnapshot,
  req: ReplayRequest,
): Promise<ReplayOutcome> {
  const digest = rulesDigest(rules);
  const maxCursor = deps.maxCursor ?? MAX_REPLAY_CURSOR;
  for (let cap = req.maxFrames; ;) {
    const run = await evaluate(deps, rules, start, { ...req, maxFrames: cap });
    if (!run.more) return { ...run.out, next_cursor: '' };
    const state: ReplayState = { rules: digest, engine: run.engine.snapshot() };
    const next_cursor = deps.cursors.sealState(taskId, state);
    if (next_cursor.length <= maxCursor) return { ...run.out, next_cursor };
    if (run.out.frames <= 1)
      throw invalidRequest(
        `The replay state after one frame is over ${maxCursor} bytes: no cursor can carry it`,
        REASON.body_too_large,
        { limit_bytes: maxCursor },
      );
    cap = Math.floor(run.out.frames / 2);
  }
}

async function evaluate(
  deps: ReplayDeps,
  rules: RuleSet,
  start: EngineSnapshot,
  req: ReplayRequest,
): Promise<{ out: Omit<ReplayOutcome, 'next_cursor'>; engine: AnalyticsEngine; more: boolean }> {
  const engine = AnalyticsEngine.restore(start, rules);
  const budget = deps.workBudget ?? REPLAY_WORK_BUDGET;
  const slices = new WorkSlices(rules, req.signal);
  const taskId = engine.taskId;
  const events: AnalyticsEvent[] = [];
  let total = 0;
  let frames = 0;
  let after = engine.lastSeq ?? -1;
  let more = true;
  const outcome = () => ({ analytics: engine.analytics(), events, events_total: total, frames });
  while (more) {
    const page = await deps.frames.page(taskId, after, deps.pageSize);
    if (page.length < deps.pageSize) more = false;
    let i = 0;
    for (; i < page.length && frames < req.maxFrames && slices.work < budget; i++) {
      const f = page[i];
      const out = engine.processFrame(analyticsFrameOf(f));
      frames++;
      total += out.events.length;
      for (const e of out.events) if (events.length < req.maxEvents) events.push(e);
      after = f.seq;
      await slices.done(f.objects.length);
    }
    if (i < page.length) return { out: outcome(), engine, more: true };
    if (more && (frames >= req.maxFrames || slices.work >= budget))
      return { out: outcome(), engine, more: (await deps.frames.page(taskId, after, 1)).length > 0 };
  }
  return { out: outcome(), engine, more: false };
}
