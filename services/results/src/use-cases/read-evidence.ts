/**
 * Reads the pictures of a task's events and tracks for its owner (docs/API.md, "Zones, lines and their events"):
 * the objects stored when the events were decided, the same bytes on every read.
 */
import {
  ApiError,
  notFound,
  ObjectNotFoundError,
  type Identity,
  type ObjectStore,
  type SnapshotReason,
} from '@vision/shared';
import type { BestShotRule } from '../domain/evidence/best-shot';
import { evidenceKeys } from '../domain/evidence/plan';
import type { EvidenceStore } from '../store/evidence-store';
import type { AnalyticsReader } from './read-analytics';

export interface StoredPicture {
  /** The JPEG (tens of kilobytes: read whole, so that an answer is never cut short). */
  body: Buffer;
  seq: number;
  frameTimeMs: number | null;
  /** Names these bytes: they never change under it. */
  etag: string;
  /** A best shot's: the rule its box met (`met`, else the fallback's `too_small` or `at_edge`). */
  rule?: BestShotRule;
}

export interface EvidenceReaderDeps {
  /** Whose task it is (404 as for an unknown one otherwise). */
  analytics: Pick<AnalyticsReader, 'own'>;
  store: EvidenceStore;
  objects: ObjectStore;
}

/** 404 OP-TASK-NO-SNAPSHOT: the event or track exists and has no picture. */
export function noSnapshot(reason: SnapshotReason): ApiError {
  return new ApiError('OP-TASK-NO-SNAPSHOT', `No picture: ${reason}`, { snapshot_reason: reason });
}

export class EvidenceReader {
  constructor(private readonly deps: EvidenceReaderDeps) {}

  async eventPicture(
    taskId: string,
    identity: Identity,
    eventId: string,
    crop: boolean,
  ): Promise<StoredPicture> {
    const { analytics, store } = this.deps;
    await analytics.own(taskId, identity);
    const row = (await store.snapshots(taskId, [eventId])).get(eventId);
    if (!row) {
      if (!(await store.hasEvent(taskId, eventId))) throw notFound('No such event');
      throw noSnapshot('not_captured');
    }
    if (row.reason !== null) throw noSnapshot(row.reason);
    const keys = evidenceKeys(taskId, { what: 'event', id: eventId, seq: row.seq });
    const body = await this.open(crop ? keys.crop : keys.full);
    if (!body) throw noSnapshot('capture_failed');
    return { body, seq: row.seq, frameTimeMs: row.frameTimeMs, etag: `"${eventId}${crop ? '-crop' : ''}"` };
  }

  async bestShot(taskId: string, identity: Identity, trackId: string, crop: boolean): Promise<StoredPicture> {
    const { analytics, store } = this.deps;
    await analytics.own(taskId, identity);
    // A better shot may replace the one read between the row and its object: read the row again once.
    for (let attempt = 0; attempt < 2; attempt++) {
      const row = await store.bestShot(taskId, trackId);
      if (!row) break;
      if (row.reason !== null) throw noSnapshot(row.reason);
      const keys = evidenceKeys(taskId, { what: 'track', id: trackId, seq: row.seq });
      const body = await this.open(crop ? keys.crop : keys.full);
      if (body)
        return {
          body,
          seq: row.seq,
          frameTimeMs: row.frameTimeMs,
          etag: `"${Buffer.from(trackId).toString('hex')}-${row.seq}${crop ? '-crop' : ''}"`,
          rule: row.rule,
        };
    }
    throw noSnapshot('not_captured');
  }

  /** The object's bytes; undefined when it is not stored. A store that fails is 503. */
  private async open(key: string): Promise<Buffer | undefined> {
    try {
      const chunks: Buffer[] = [];
      for await (const c of await this.deps.objects.get(key)) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    } catch (err) {
      if (err instanceof ObjectNotFoundError || (err as { code?: unknown })?.code === 'NotFound')
        return undefined;
      throw new ApiError('OP-SYS-UNAVAILABLE', 'The object store did not answer, retry later');
    }
  }
}
