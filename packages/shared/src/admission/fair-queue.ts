/**
 * Who is served, who waits and who is refused when more work arrives than a service can run (pure: the
 * runtime in admission-queue.ts carries the decisions out). docs/OVERLOAD.md explains the rule.
 *
 * - At most `maxInFlight` calls run at once; the rest wait in a queue.
 * - A new call's expected wait is the work queued ahead of it divided among the running slots, at the
 *   measured mean service time of a call. A call that would wait longer than its bound (the service's
 *   queue bound, or less when the caller's deadline is nearer) is refused at once.
 * - Fair across subjects: the next call to start is the oldest of the subject with the fewest calls in
 *   the service (running and waiting), unless the oldest call of all has waited half the queue's bound:
 *   then it starts first, so that no call is passed over until it must be refused;
 *   and when a subject below its fair share would be refused, the newest queued call of the subject
 *   furthest above its share is refused instead, and the newcomer takes its place, but only while that
 *   call is fresh (FRESH_MS): a call that has waited longer is never refused for another.
 * So a refusal comes on a call's arrival, or within FRESH_MS of it; later only when the estimate proved
 * wrong (the runtime's backstop).
 */

/** How long a queued call may still lose its place to a subject below its share (ms). */
export const FRESH_MS = 50;

export interface Waiting {
  id: number;
  subject: string;
  /** When it joined the queue (ms). */
  since: number;
}

export interface QueueView {
  /** Calls that may run at once now (the queue's fixed or adaptive limit). */
  maxInFlight: number;
  /** Calls running now, per subject. */
  running: ReadonlyMap<string, number>;
  /** Calls waiting, oldest first. */
  waiting: readonly Waiting[];
  /** Mean time one call takes once started (ms); 0 until measured. */
  meanServiceMs: number;
  /** The time of the decision (ms, the clock of `since`). */
  now: number;
  /** The queue's bound on a call's wait (ms). */
  maxWaitMs: number;
}

export type Admission =
  | { kind: 'start' }
  | { kind: 'wait'; expectedWaitMs: number; evict?: Waiting }
  | { kind: 'refuse'; expectedWaitMs: number };

function total(m: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
}

/** Calls a subject has in the service (running or waiting). */
export function loadOf(view: QueueView, subject: string): number {
  return (view.running.get(subject) ?? 0) + view.waiting.filter((w) => w.subject === subject).length;
}

/** The wait a call joining the queue behind `ahead` calls can expect (ms). */
export function expectedWait(view: QueueView, ahead: number): number {
  if (total(view.running) < view.maxInFlight && ahead === 0) return 0;
  return Math.ceil((ahead + 1) / view.maxInFlight) * view.meanServiceMs;
}

/** Subjects with calls in the service, plus `asking`. */
function subjects(view: QueueView, asking: string): Set<string> {
  const s = new Set<string>([asking]);
  for (const [k, v] of view.running) if (v > 0) s.add(k);
  for (const w of view.waiting) s.add(w.subject);
  return s;
}

/** Decides a new call of `subject` that may wait at most `boundMs`. */
export function admit(view: QueueView, subject: string, boundMs: number): Admission {
  if (view.waiting.length === 0 && total(view.running) < view.maxInFlight) return { kind: 'start' };
  const wait = expectedWait(view, view.waiting.length);
  // A call that may not wait at all never joins the queue (its expected wait is 0 only while no call has
  // been measured yet).
  if (wait <= boundMs && boundMs > 0) return { kind: 'wait', expectedWaitMs: wait };
  // Full. A subject below its fair share of what the service holds takes the place of the newest call of
  // the subject furthest above it.
  const all = subjects(view, subject);
  const share = (total(view.running) + view.waiting.length) / all.size;
  const mine = loadOf(view, subject);
  if (mine < share) {
    let heaviest: string | undefined;
    for (const s of all)
      if (s !== subject && (heaviest === undefined || loadOf(view, s) > loadOf(view, heaviest))) heaviest = s;
    if (heaviest !== undefined && loadOf(view, heaviest) > mine + 1) {
      const evict = [...view.waiting].reverse().find((w) => w.subject === heaviest);
      if (evict && view.now - evict.since <= FRESH_MS)
        return { kind: 'wait', expectedWaitMs: expectedWait(view, view.waiting.length - 1), evict };
    }
  }
  return { kind: 'refuse', expectedWaitMs: wait };
}

/**
 * The waiting call to start next: the oldest call once it has waited half the bound, else the oldest of
 * the subject with the fewest calls in the service.
 */
export function nextToStart(view: QueueView): Waiting | undefined {
  if (total(view.running) >= view.maxInFlight) return undefined;
  const oldest = view.waiting[0];
  if (oldest && view.now - oldest.since >= view.maxWaitMs / 2) return oldest;
  let best: Waiting | undefined;
  for (const w of view.waiting) if (!best || loadOf(view, w.subject) < loadOf(view, best.subject)) best = w;
  return best;
}

/** The Retry-After (whole seconds, at least 1) for a refusal with this expected wait. */
export function retryAfterSeconds(expectedWaitMs: number): number {
  return Math.max(1, Math.ceil(expectedWaitMs / 1000));
}
