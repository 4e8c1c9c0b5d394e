import { invalidRequest, notFound, type Clock, type Identity, type RuleSet } from '@vision/shared';
import type { AnalyticsEvent, AnalyticsSummary } from '../domain/analytics';
import type { CursorCodec } from '../domain/cursor';
import { isEndOfEvents, isExpired } from '../domain/task-meta';
import type { AnalyticsStore } from '../store/analytics-store';
import type { FramesStore } from '../store/frames-store';
import type { TaskResolver } from './resolve-task';
import { replayPage, replayStart, type ReplayOutcome, type ReplayRequest } from './replay-analytics';
import { withEvidence, type ShownEvent } from '../domain/evidence/decorate';
import type { EvidenceStore } from '../store/evidence-store';
import { engineOf, geometryOf } from './run-analytics';

export type { ReplayOutcome, ReplayRequest } from './replay-analytics';

export interface EventsPage {
  /** The events as stored (the JSON the engine gave), each with what it says of its picture (decorate.ts). */
  items: AnalyticsEvent[];
  next_cursor: string;
  /** The cursor after each item (an event stream's ids). */
  itemCursors: string[];
}

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
  /** Work units per replay request (replay-budget.ts). */
  replayWorkBudget?: number;
  /** The pictures' rows: each event read says whether it has one (absent: none says so). */
  evidence?: EvidenceStore;
}

/** GET analytics and events, and replays, of a video task for its owner (docs/API.md). */
export class AnalyticsReader {
  constructor(private readonly deps: AnalyticsReaderDeps) {}

  /** The caller's video task, or 404 as for an unknown one (another subject's, expired, an image call). */
  async own(taskId: string, identity: Identity) {
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
      // Every event is out once the task has ended, its frames are complete and every stored frame was evaluated.
      const rec = await store.get(taskId);
      const lastStored = await frames.lastSeq(taskId);
      const evaluated = rec ? (rec.snapshot?.as_of_seq ?? -1) : lastStored;
      const now = clock.now();
      done =
        evaluated >= lastStored &&
        isEndOfEvents({
          meta: task.meta,
          end: task.end,
          lastSeq: lastStored,
          hasMore: false,
          now,
          endGraceMs,
        });
    }
    return {
      items: await this.shown(
        taskId,
        page.map((r) => JSON.parse(r.body) as AnalyticsEvent),
      ),
      next_cursor: done ? '' : cursors.encode({ taskId, lastSeq: lastN }),
      itemCursors: page.map((r) => cursors.encode({ taskId, lastSeq: r.n })),
    };
  }

  /**
   * Runs `rules` as version 1 over the task's stored frames in seq order, in a fresh engine (the task's own
   * analytics are not touched), a page per request (replay-analytics.ts): a request that stops before the last
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
    // Under the task's own geometry, so that its creation rules give its stored events.
    const start =
      req.cursor === undefined
        ? replayStart(
            this.deps.replayCursors,
            taskId,
            rules,
            undefined,
            geometryOf(await this.deps.store.get(taskId)),
          )
        : replayStart(this.deps.replayCursors, taskId, rules, req.cursor);
    await this.own(taskId, identity);
    const out = await replayPage(
      {
        frames: this.deps.frames,
        cursors: this.deps.replayCursors,
        pageSize: this.deps.replayPage ?? 1000,
        ...(this.deps.replayWorkBudget !== undefined ? { workBudget: this.deps.replayWorkBudget } : {}),
      },
      taskId,
      rules,
      start,
      req,
    );
    // A replay links the pictures taken for its event ids and takes none.
    return { ...out, events: await this.shown(taskId, out.events) };
  }

  /** Events as the API shows them: with whether each has a picture (decorate.ts). */
  private async shown(taskId: string, events: AnalyticsEvent[]): Promise<ShownEvent[]> {
    const rows =
      (await this.deps.evidence?.snapshots(
        taskId,
        events.map((e) => e.id),
      )) ?? new Map();
    return events.map((e) => withEvidence(e, rows.get(e.id)?.reason));
  }
}
