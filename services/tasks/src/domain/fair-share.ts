/**
 * Sharing the inference backend's job slots between subjects (docs/OVERLOAD.md "Capacity and fair share").
 * Pure: the counts come from the task store, the decisions are carried out by use-cases/admission.ts
 * and workers/dispatcher.ts.
 *
 * - A subject's share is floor(slots / demanding subjects), at least 1; a subject demands while it
 *   holds a slot or has a queued task (the one asking counts too).
 * - A subject may start a job while it holds less than its share, or when the free slots exceed what
 *   the other demanding subjects are still owed (nobody else is kept from their share: no slot idles).
 * - Live tasks need a slot now: start, or refuse (over the subject's share; the backend says when full).
 * - File tasks are not real-time: start when allowed and nobody is queued ahead, else queue (FIFO)
 *   while the queue has room, else refuse.
 * - The dispatcher starts the first queued task (oldest first) whose subject may start.
 */

export interface SlotView {
  /** Job slots of the inference backend (TASKS_INFERENCE_SLOTS). */
  slots: number;
  /** Slots held per subject (tasks submitted, running, stopping or resolving). */
  holding: ReadonlyMap<string, number>;
  /** Queued file tasks, oldest first. */
  queued: ReadonlyArray<QueuedTask>;
}

export interface QueuedTask {
  task_id: string;
  subject: string;
}

export type LiveDecision =
  { kind: 'start' } | { kind: 'refuse'; why: 'over_share'; share: number; held: number };

export type FileDecision =
  { kind: 'start' } | { kind: 'queue'; position: number } | { kind: 'refuse'; why: 'queue_full' };

function held(view: SlotView, subject: string): number {
  return view.holding.get(subject) ?? 0;
}

export function freeSlots(view: SlotView): number {
  let used = 0;
  for (const n of view.holding.values()) used += n;
  return Math.max(0, view.slots - used);
}

/** Subjects holding a slot or queued, plus `asking`. */
export function demanding(view: SlotView, asking?: string): Set<string> {
  const s = new Set<string>();
  for (const [subject, n] of view.holding) if (n > 0) s.add(subject);
  for (const q of view.queued) s.add(q.subject);
  if (asking !== undefined) s.add(asking);
  return s;
}

/** The number of slots `subject` is entitled to while the current subjects demand slots. */
export function shareOf(view: SlotView, subject: string): number {
  return Math.max(1, Math.floor(view.slots / demanding(view, subject).size));
}

/** Whether `subject` may take one more slot now. */
export function mayStart(view: SlotView, subject: string): boolean {
  const free = freeSlots(view);
  if (free === 0) return false;
  const share = shareOf(view, subject);
  if (held(view, subject) < share) return true;
  // Over its share: only slots nobody else is owed.
  let owed = 0;
  for (const other of demanding(view, subject))
    if (other !== subject) owed += Math.max(0, share - held(view, other));
  return free > owed;
}

/**
 * A new live task of `subject`: refused when the subject holds its share already, other subjects want
 * slots too and the free ones are owed to them; otherwise it is submitted (with no free slot by our count, the backend's own answer decides:
 * at capacity is 503, our count may lag a job that just ended).
 */
export function decideLive(view: SlotView, subject: string): LiveDecision {
  const share = shareOf(view, subject);
  const h = held(view, subject);
  // Alone, a subject's share is every slot: only the backend can say it is full.
  if (h < share || demanding(view, subject).size === 1 || mayStart(view, subject)) return { kind: 'start' };
  return { kind: 'refuse', why: 'over_share', share, held: h };
}

/** A new file task of `subject`, with `maxQueued` the bound of the queue (all subjects together). */
export function decideFile(view: SlotView, subject: string, maxQueued: number): FileDecision {
  if (nextToStart(view) === undefined && mayStart(view, subject)) return { kind: 'start' };
  if (view.queued.length >= maxQueued) return { kind: 'refuse', why: 'queue_full' };
  return { kind: 'queue', position: view.queued.length + 1 };
}

/** The queued task to start next (oldest first among the subjects that may start), if any. */
export function nextToStart(view: SlotView): QueuedTask | undefined {
  if (freeSlots(view) === 0) return undefined;
  return view.queued.find((q) => mayStart(view, q.subject));
}

/** The view after `subject` took one slot (for planning several starts in one pass). */
export function withStarted(view: SlotView, task: QueuedTask): SlotView {
  const holding = new Map(view.holding);
  holding.set(task.subject, held(view, task.subject) + 1);
  return { slots: view.slots, holding, queued: view.queued.filter((q) => q.task_id !== task.task_id) };
}
