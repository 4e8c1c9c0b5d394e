import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { RuleSet } from '@vision/shared';
import { frameWork, SLICE_WORK, workPerObject } from '../domain/analytics/replay-budget';

/**
 * The evaluation of frames in slices: it counts each frame's work (replay-budget.ts) and yields to the event loop
 * once a slice's worth is done, so that a long evaluation (a replay page, a page of stored frames) never holds
 * the loop for more than a slice. Used by the replay and by the ingest's AnalyticsRunner.
 */
export class WorkSlices {
  private readonly perObject: number;
  private slice = 0;
  /** Units counted so far. */
  work = 0;

  constructor(
    rules: RuleSet,
    private readonly signal?: AbortSignal,
  ) {
    this.perObject = workPerObject(rules);
  }

  /** After a frame of `objects` objects was evaluated: counts it, and yields when its slice is full. */
  async done(objects: number): Promise<void> {
    const units = frameWork(this.perObject, objects);
    this.work += units;
    this.slice += units;
    if (this.slice < SLICE_WORK) return;
    this.slice = 0;
    await yieldToLoop();
    this.signal?.throwIfAborted();
  }
}
