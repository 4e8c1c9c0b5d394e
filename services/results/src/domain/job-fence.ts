/**
 * Fencing of video jobs' owners (docs/INTERNAL.md, "vision.frames"). Every message of a job carries the epoch at
 * which its replica took the job; each take raises it. Walking a partition's batch in order, a message below its
 * task's fence comes from a replica that lost the job (paused, cut off, slow to die) and is refused; a higher one
 * raises the fence. A message without an epoch counts as epoch 0 (a publisher that predates fencing). Pure.
 */
export interface FenceChange {
  epoch: number;
  /** Messages refused under the fence in this batch. */
  refused: number;
}

export class FenceWalk {
  private readonly fences: Map<string, number>;
  private readonly changes = new Map<string, FenceChange>();

  constructor(stored: ReadonlyMap<string, number>) {
    this.fences = new Map(stored);
  }

  /** Whether the message of `taskId` at `epoch` is kept; the fence follows the highest epoch seen. */
  admit(taskId: string, epoch: number | undefined): boolean {
    const e = epoch ?? 0;
    const fence = this.fences.get(taskId) ?? 0;
    const change = () => {
      let c = this.changes.get(taskId);
      if (!c) this.changes.set(taskId, (c = { epoch: Math.max(fence, e), refused: 0 }));
      return c;
    };
    if (e < fence) {
      change().refused++;
      return false;
    }
    if (e > fence) {
      this.fences.set(taskId, e);
      change().epoch = e;
    }
    return true;
  }

  /** The fences raised and the refusals counted in this batch, to store. */
  changed(): ReadonlyMap<string, FenceChange> {
    return this.changes;
  }
}
