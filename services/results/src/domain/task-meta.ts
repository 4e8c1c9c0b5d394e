/** What results knows about a task: ownership, thresholds, retention, status, and whether its frames ended. */

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['stopped', 'succeeded', 'failed', 'refunded']);

export const isTerminalStatus = (status: string): boolean => TERMINAL_STATUSES.has(status);

export interface TaskMeta {
  taskId: string;
  subject: string;
  kind: 'video' | 'image';
  status: string;
  /** Business threshold frozen at the task's creation: applied when a read gives no `min_score`. */
  businessThreshold: number;
  /** Inference lower bound: nothing under it is stored; a lower `min_score` is clamped to it. */
  lowerBound: number;
  resultExpiresAt: Date;
  /** When `status` was reached (event time), or when it was observed (fallback fetch). */
  statusAt?: Date;
}

/** The `end` marker inference publishes after a job's last frame. */
export interface EndMarker {
  /** Number of frames the job published: seqs 0..frames-1. */
  frames: number;
  status: string;
}

/** The score filter of a read (SPEC.md 4.4 rules 1 and 2). */
export function appliedThreshold(
  meta: Pick<TaskMeta, 'businessThreshold' | 'lowerBound'>,
  minScore?: number,
): number {
  if (minScore === undefined) return meta.businessThreshold;
  return Math.max(minScore, meta.lowerBound);
}

/** Results of a task are gone once `result_expires_at` has passed. */
export function isExpired(meta: Pick<TaskMeta, 'resultExpiresAt'>, now: Date): boolean {
  return meta.resultExpiresAt.getTime() <= now.getTime();
}

export interface EndOfDataInput {
  meta: TaskMeta;
  end?: EndMarker;
  /** Seq of the last frame the client will have after this page (-1 when it has none). */
  lastSeq: number;
  /** True when more stored frames follow this page. */
  hasMore: boolean;
  now: Date;
  /** How long after a terminal status without an end marker the frames count as complete. */
  endGraceMs: number;
}

/**
 * True when the client has every frame the task will ever have: `next_cursor` is then empty. While
 * that is not known the page carries a cursor that resumes after `lastSeq`.
 *
 * - With an end marker: done once the client has seq `frames - 1` (frames have no gaps).
 * - Without one: image tasks have no frames; a refunded task never ran; another terminal status counts
 *   as complete `endGraceMs` after it was reached (inference lost the job and published no marker).
 */
export function isEndOfData(input: EndOfDataInput): boolean {
  if (input.hasMore) return false;
  if (input.end) return input.lastSeq >= input.end.frames - 1;
  const { meta } = input;
  if (meta.kind === 'image') return true;
  if (!isTerminalStatus(meta.status)) return false;
  if (meta.status === 'refunded') return true;
  const since = meta.statusAt?.getTime();
  return since !== undefined && since + input.endGraceMs <= input.now.getTime();
}

/**
 * True when every analytics event of a task is out: its frames are complete (isEndOfData) and the task has ended
 * (a terminal status, from its task events). Until it has ended its rules may still change, and a change appends
 * events; once it has, tasks refuses any change of its rules, so this end is final.
 */
export function isEndOfEvents(input: EndOfDataInput): boolean {
  return isTerminalStatus(input.meta.status) && isEndOfData(input);
}
