/**
 * `vision events --snapshots DIR`: each event's picture saved as DIR/<event id>.jpg (docs/ANALYTICS.md,
 * "Evidence"). A picture already saved is not read again (the service answers the same bytes on every read); each
 * file is written whole or not at all (written aside, then renamed).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { VisionApiError, type AnalyticsEvent, type PlacesApi } from '@vision/sdk';
import { UsageError } from './exit-codes';

/** An event id as the service makes them; nothing else becomes a file name. */
const EVENT_ID = /^[0-9a-f]{32}$/;

export interface SnapshotOutcome {
  /** The file the picture is in, when it has one. */
  file?: string;
  /** Why it has none (`frame_gone`, `capture_failed`, `not_captured`, ...). */
  reason?: string;
}

export interface SnapshotSaver {
  save(e: AnalyticsEvent): Promise<SnapshotOutcome>;
  /** One line: how many pictures were saved and how many events had none. */
  summary(): string;
}

export function snapshotSaver(places: PlacesApi, dir: string, crop: boolean): SnapshotSaver {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new UsageError(`--snapshots ${dir}: ${(err as Error).message}`);
  }
  let saved = 0;
  let kept = 0;
  let without = 0;
  const none = (reason: string): SnapshotOutcome => {
    without++;
    return { reason };
  };
  return {
    async save(e) {
      if (!EVENT_ID.test(e.id)) return none('malformed_event_id');
      if (e.has_snapshot !== true) return none(e.snapshot_reason ?? 'none');
      const file = path.join(dir, `${e.id}.jpg`);
      if (existsSync(file)) {
        kept++;
        return { file };
      }
      let bytes: Uint8Array;
      try {
        bytes = (await places.eventSnapshot(e.task_id, e.id, { crop })).bytes;
      } catch (err) {
        // The event said it had one, but the service has none now (expired meanwhile): said, and the rest go on.
        if (err instanceof VisionApiError && err.code === 'OP-TASK-NO-SNAPSHOT') {
          const reason = err.details.snapshot_reason;
          return none(typeof reason === 'string' ? reason : 'none');
        }
        throw err;
      }
      const part = `${file}.${process.pid}.part`;
      try {
        await writeFile(part, bytes);
        await rename(part, file);
      } catch (err) {
        await rm(part, { force: true });
        throw err;
      }
      saved++;
      return { file };
    },
    summary() {
      const already = kept ? ` (${kept} already there)` : '';
      return `${saved + kept} snapshot${saved + kept === 1 ? '' : 's'} in ${dir}${already}; ${without} event${without === 1 ? '' : 's'} without one`;
    },
  };
}
