import { createHash } from 'node:crypto';
import { invalidRequest, notFound, type Clock, type Identity, type RuleSet } from '@vision/shared';
import {
  AnalyticsEngine,
  analyticsFrameOf,
  type AnalyticsEvent,
  type AnalyticsSummary,
  type EngineSnapshot,
} from '../domain/analytics';
import type { CursorCodec } from '../domain/cursor';
import { isEndOfData, isExpired } from '../domain/task-meta';
import type { AnalyticsStore } from '../store/analytics-store';
import type { FramesStore } from '../store/frames-store';
import type { TaskResolver } from './resolve-task';
import { engineOf, geometryOf } from './run-analytics';

export interface EventsPage {
  /** The events as stored: the JSON the engine gave, byte for byte. */
  items: AnalyticsEvent[];
  next_cursor: string;
  /** The cursor after each item (an event stream's ids). */
  itemCursors: string[];
}

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
}

/** The longest replay cursor (its state grows with the tracks the rules follow): under the 1 MiB body limit. */
export const MAX_REPLAY_CURSOR = 768 * 1024;

/** Frames evaluated beyond the cap, at a time, while the state is too large for a cursor. */
const REPLAY_CURSOR_RETRY_FRAMES = 100;

/** What a replay cursor seals: the rule set it belongs to and the engine after the frames evaluated so far. */
interface ReplayState {
  rules: string;
  engine: EngineSnapshot;
}

const rulesDigest = (rules: RuleSet) =>
  createHash('sha256').update(JSON.stringify(rules)).digest('base64url');

export interface AnalyticsReaderDeps {
  store: AnalyticsStore;
  frames: FramesStore;
  resolver: TaskResolver;
  /** Events cursors (CursorCodec of purpose `events`). */
  cursors: CursorCodec;
  /** Replay cursors (CursorCodec of purpose `replay`). */
  replayCursors: CursorCodec;
  clock: Clock;
  endGraceMs: number;
  /** Frames read per round of a replay. */
  replayPage?: number;
}

/** GET analytics and events, and replays, of a video task for its owner (docs/API.md). */
export class AnalyticsReader {
  constructor(private readonly deps: AnalyticsReaderDeps) {}

  /** The caller's video task, or 404 as for an unknown one. */
  private async own(taskId: string, identity: Identity) {
    const rec = await this.deps.resolver.resolve(taskId, identity);
    if (
      !rec ||
      rec.meta.subject !== identity.subject ||
      rec.meta.kind !== 'video' ||
      isExpired(rec.meta, this.deps.clock.now())
    )
      throw notFound('Task not found');
    return rec;
  }

  /** The last event number an events cursor of `taskId` names; 400 `invalid_cursor` for anything else. */
  position(taskId: string, cursor: string): number {
    const c = this.deps.cursors.decode(cursor, taskId);
    if (!c.ok)
      throw invalidRequest('cursor is not an events cursor of this task', 'invalid_cursor', {
        field: 'cursor',
      });
    return c.position.lastSeq;
  }

  async summary(taskId: string, identity: Identity): Promise<AnalyticsSummary> {
    await this.own(taskId, identity);
    const rec = await this.deps.store.get(taskId);
    if (!rec) return { task_id: taskId, rules_version: 0, as_of_seq: null, media_ms: null, rules: [] };
    return engineOf(rec).analytics();
  }

  async events(
    taskId: string,
    identity: Identity,
    query: { cursor?: string; limit: number },
  ): Promise<EventsPage> {
    const { store, frames, cursors, clock, endGraceMs } = this.deps;
    const afterN = query.cursor === undefined ? -1 : this.position(taskId, query.cursor);
    const task = await this.own(taskId, identity);
    const rows = await store.eventsPage(taskId, afterN, query.limit + 1);
    const hasMore = rows.length > query.limit;
    const page = hasMore ? rows.slice(0, query.limit) : rows;
    const lastN = page.length > 0 ? page[page.length - 1].n : afterN;
    let done = false;
    if (!hasMore) {
      // Every event is out once the task's frames are complete and every stored frame was evaluated.
      const rec = await store.get(taskId);
      const lastStored = await frames.lastSeq(taskId);
      const evaluated = rec ? (rec.snapshot?.as_of_seq ?? -1) : lastStored;
      const now = clock.now();
      done =
        evaluated >= lastStored &&
        isEndOfData({ meta: task.meta, end: task.end, lastSeq: lastStored, hasMore: false, now, endGraceMs });
    }
    return {
      items: page.map((r) => JSON.parse(r.body) as AnalyticsEvent),
      next_cursor: done ? '' : cursors.encode({ taskId, lastSeq: lastN }),
      itemCursors: page.map((r) => cursors.encode({ taskId, lastSeq: r.n })),
    };
  }

  /**
   * Runs `rules` as version 1 over the task's stored frames in seq order, in a fresh engine (the task's own
   * analytics are not touched), at most `maxFrames` of them per request: a request that stops before the last
   * stored frame answers a `next_cursor` sealing the engine's state, and the next request with the same rules and
   * that cursor goes on from there, so the pages together give what one unbounded replay would, byte for byte.
   * At most `maxEvents` events of this request are kept (the first ones); the analytics cover every frame so far.
   */
  async replay(
    taskId: string,
    identity: Identity,
    rules: RuleSet,
    req: ReplayRequest,
  ): Promise<ReplayOutcome> {
    const digest = rulesDigest(rules);
    let engine: AnalyticsEngine;
    // Under the task's own geometry, so that its creation rules give its stored events.
    if (req.cursor === undefined)
      engine = AnalyticsEngine.create(taskId, rules, 1, geometryOf(await this.deps.store.get(taskId)));
    else {
      const state = this.deps.replayCursors.openState(req.cursor, taskId, MAX_REPLAY_CURSOR) as
        ReplayState | undefined;
      if (!state || typeof state !== 'object' || state.rules !== digest)
        throw invalidRequest('cursor is not a replay cursor of this task and rule set', 'invalid_cursor', {
          field: 'cursor',
        });
      engine = AnalyticsEngine.restore(state.engine);
    }
    await this.own(taskId, identity);
    const pageSize = this.deps.replayPage ?? 1000;
    const events: AnalyticsEvent[] = [];
    let total = 0;
    let frames = 0;
    let more = true;
    let after = engine.lastSeq ?? -1;
    let cap = req.maxFrames;
    let next_cursor = '';
    for (;;) {
      while (more && frames < cap) {
        const want = Math.min(pageSize, cap - frames);
        // The page that reaches the cap reads one frame more, to know whether any is left.
        const last = want === cap - frames;
        const page = await this.deps.frames.page(taskId, after, last ? want + 1 : want);
        for (const f of page.slice(0, want)) {
          const out = engine.processFrame(analyticsFrameOf(f));
          frames++;
          total += out.events.length;
          for (const e of out.events) if (events.length < req.maxEvents) events.push(e);
          after = f.seq;
        }
        if (page.length < want || (last && page.length === want)) more = false;
      }
      if (!more) break;
      const state: ReplayState = { rules: digest, engine: engine.snapshot() };
      next_cursor = this.deps.replayCursors.sealState(taskId, state);
      if (next_cursor.length <= MAX_REPLAY_CURSOR) break;
      // A state too large to carry (tracks crowd the rules): go on until it is smaller or the frames end.
      next_cursor = '';
      cap = frames + REPLAY_CURSOR_RETRY_FRAMES;
    }
    return { analytics: engine.analytics(), events, events_total: total, frames, next_cursor };
  }
}
