/** The meaning of a create request, compared on idempotent replays (DESIGN.md section 3). Pure. */
import { createHash } from 'node:crypto';

/** `rules`: the canonical JSON of the zones and lines given, absent when none were (so older keys keep their meaning). */
export type CreateMeaning =
  | { endpoint: 'tasks'; scene_code: string; stream_url: string; rules?: string }
  | { endpoint: 'video-tasks'; scene_code: string; file_sha256: string; rules?: string };

export function fingerprintOf(m: CreateMeaning): string {
  const parts =
    m.endpoint === 'tasks'
      ? ['POST /v1/vision/tasks', m.scene_code, m.stream_url]
      : ['POST /v1/vision/video-tasks', m.scene_code, m.file_sha256];
  if (m.rules !== undefined) parts.push(m.rules);
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
