import { invalidRequest, notFound, type Clock, type Identity } from '@vision/shared';
import { evaluatedOnly, type CursorCodec } from '../domain/cursor';
import { toPublicFrame, type PublicFrame } from '../domain/frames';
import type { ReadQuery } from '../domain/read-query';
import { appliedThreshold, isEndOfData, isExpired } from '../domain/task-meta';
import type { FramesStore } from '../store/frames-store';
import type { TaskResolver } from './resolve-task';

export interface ResultsPage {
  items: PublicFrame[];
  /** Empty when the client has every frame the task will ever have (of a task with rules: each evaluated). */
  next_cursor: string;
}

export interface ReadOutcome {
  page: ResultsPage;
  /** The score filter that was applied (after defaulting and clamping). */
  appliedMinScore: number;
  /** The cursor just after each item of the page, in order (a frame stream's event ids). */
  itemCursors: string[];
}

export interface ReaderDeps {
  frames: FramesStore;
  resolver: TaskResolver;
  cursors: CursorCodec;
  clock: Clock;
  endGraceMs: number;
}

/** GET /v1/vision/tasks/{id}/results: one page of a task's frames for its owner. */
export class ResultsReader {
  constructor(private readonly deps: ReaderDeps) {}

  /** The last sequence number a cursor of `taskId` names; 400 `invalid_cursor` for anything else. */
  position(taskId: string, cursor: string): number {
    const c = this.deps.cursors.decode(cursor, taskId);
    if (!c.ok)
      throw invalidRequest('cursor is not a cursor of this task', 'invalid_cursor', { field: 'cursor' });
    return c.position.lastSeq;
  }

  async read(taskId: string, identity: Identity, query: ReadQuery): Promise<ReadOutcome> {
    const { frames, resolver, cursors, clock, endGraceMs } = this.deps;
    const afterSeq = query.cursor === undefined ? -1 : this.position(taskId, query.cursor);

    const rec = await resolver.resolve(taskId, identity);
    const now = clock.now();
    // Another subject's task, an unknown id and a task whose results expired look the same.
    if (!rec || rec.meta.subject !== identity.subject || isExpired(rec.meta, now))
      throw notFound('Task not found');

    // One row more than the page tells whether stored frames follow it. Of a task with zones or lines, only
    // evaluated frames are served: the page stops at the last one, and frames stored after it wait.
    const read = await frames.readable(taskId, afterSeq, query.limit + 1);
    const { rows, waiting } = evaluatedOnly(read.frames, read.asOfSeq);
    const hasMore = rows.length > query.limit;
    const pageRows = hasMore ? rows.slice(0, query.limit) : rows;
    const threshold = appliedThreshold(rec.meta, query.minScore);
    const withTotal = query.minScore !== undefined;
    const items = pageRows.map((f) => toPublicFrame(f, threshold, withTotal));
    const lastSeq = pageRows.length > 0 ? pageRows[pageRows.length - 1].seq : afterSeq;
    const done = isEndOfData({
      meta: rec.meta,
      end: rec.end,
      lastSeq,
      hasMore: hasMore || waiting,
      now,
      endGraceMs,
    });
    return {
      page: { items, next_cursor: done ? '' : cursors.encode({ taskId, lastSeq }) },
      appliedMinScore: threshold,
      itemCursors: pageRows.map((f) => cursors.encode({ taskId, lastSeq: f.seq })),
    };
  }
}
