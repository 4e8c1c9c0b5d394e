/**
 * The evidence of one step of a task's evaluation (docs/EVIDENCE.md): the pictures of its events and
 * the best shots its frames improve (every track of its frames without a stored picture gets one) are taken and
 * put in the object store first; the rows that name them, or say why a track has no picture, are written in the
 * step's transaction (EvidenceStore.write), and the replaced best shots' objects deleted after it.
 */
import type { Logger, ObjectStore, RuleSet, SnapshotReason } from '@vision/shared';
import type { AnalyticsEvent } from '../domain/analytics';
import { bestShotPicks, eventPicks, evidenceKeys } from '../domain/evidence/plan';
import type { StoredFrame } from '../domain/frames';
import type { BestShotRow, EvidenceStore, SnapshotRow } from '../store/evidence-store';
import type { FramesStore } from '../store/frames-store';
import type { EvidenceCapture } from './capture-evidence';

export interface EvidenceDeps {
  capture: EvidenceCapture;
  store: EvidenceStore;
  frames: FramesStore;
  objects: ObjectStore;
  logger: Logger;
}

export interface StepEvidence {
  snaps: SnapshotRow[];
  bests: BestShotRow[];
  /** Objects of best shots this step replaces: deleted once its transaction committed. */
  replaced: string[];
}

export const NO_EVIDENCE: StepEvidence = { snaps: [], bests: [], replaced: [] };

/** Each stored frame an event names, from the step's own frames or read (a rule change's last frame). */
async function framesOf(
  frames: FramesStore,
  taskId: string,
  page: readonly StoredFrame[],
  events: readonly AnalyticsEvent[],
): Promise<Map<number, StoredFrame>> {
  const bySeq = new Map(page.map((f) => [f.seq, f]));
  for (const seq of new Set(events.map((e) => e.seq)))
    if (!bySeq.has(seq)) {
      const [f] = await frames.page(taskId, seq - 1, 1);
      if (f?.seq === seq) bySeq.set(seq, f);
    }
  return bySeq;
}

/**
 * Takes the pictures of a step: `events` over the rules in force before the step (`rules`: a rule change's events
 * are drawn with the zones they end), and the best shots of the tracks of `page`.
 */
export async function takeStepEvidence(
  d: EvidenceDeps,
  taskId: string,
  subject: string,
  events: readonly AnalyticsEvent[],
  page: readonly StoredFrame[],
  rules: RuleSet,
): Promise<StepEvidence> {
  const bySeq = await framesOf(d.frames, taskId, page, events);
  const trackIds = [
    ...new Set(page.flatMap((f) => f.objects.flatMap((o) => (o.t === undefined ? [] : [o.t])))),
  ];
  const kept =
    trackIds.length > 0 ? await d.store.bestShots(taskId, trackIds) : new Map<string, BestShotRow>();
  // A track whose picture could not be taken has none kept: this step tries again with its best box.
  const stored = new Map([...kept].filter(([, b]) => b.reason === null));
  const picks = [...eventPicks(events, bySeq, rules), ...bestShotPicks(page, stored)];
  if (picks.length === 0) return NO_EVIDENCE;
  const taken = await d.capture.take(taskId, subject, picks);
  const out: StepEvidence = { snaps: [], bests: [], replaced: [] };
  for (const { item, reason } of taken) {
    const frameTimeMs = bySeq.get(item.seq)?.frameTimeMs ?? null;
    if (item.what === 'event') {
      out.snaps.push({ eventId: item.id, seq: item.seq, frameTimeMs, reason });
      continue;
    }
    if (item.score === undefined || item.rule === undefined || frameTimeMs === null) continue;
    const old = stored.get(item.id);
    // A failed picture never hides a stored one: the track keeps it, and its row says nothing of the failure.
    if (reason !== null && old) continue;
    out.bests.push({
      trackId: item.id,
      seq: item.seq,
      frameTimeMs,
      score: item.score,
      rule: item.rule,
      reason,
    });
    if (reason === null && old && old.seq !== item.seq) {
      const keys = evidenceKeys(taskId, { what: 'track', id: item.id, seq: old.seq });
      out.replaced.push(keys.full, keys.crop);
    }
  }
  return out;
}

/** After the step committed: the objects of the best shots it replaced go (a failure leaves them to retention). */
export async function dropReplaced(d: EvidenceDeps, taskId: string, ev: StepEvidence): Promise<void> {
  if (ev.replaced.length === 0) return;
  await d.objects.delete(ev.replaced).catch((err: unknown) => {
    d.logger.warn({ err, task_id: taskId }, 'replaced best shots not deleted; retention removes them');
  });
}

/** What the events of a step say about their pictures, by event id. */
export function evidenceById(ev: StepEvidence): Map<string, SnapshotReason | null> {
  return new Map(ev.snaps.map((s) => [s.eventId, s.reason]));
}
