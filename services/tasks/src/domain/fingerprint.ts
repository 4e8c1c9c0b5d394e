/** The meaning of a create request, compared on idempotent replays (DESIGN.md section 3). Pure. */
import { createHash } from 'node:crypto';

export type CreateMeaning =
  | { endpoint: 'tasks'; scene_code: string; stream_url: string }
  | { endpoint: 'video-tasks'; scene_code: string; file_sha256: string };

export function fingerprintOf(m: CreateMeaning): string {
  const parts =
    m.endpoint === 'tasks'
      ? ['POST /v1/vision/tasks', m.scene_code, m.stream_url]
      : ['POST /v1/vision/video-tasks', m.scene_code, m.file_sha256];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Standard UUID form (8-4-4-4-12 hex digits, any version). */
export function isUuid(v: unknown): v is string {
  return typeof v === 'string' && UUID_RE.test(v);
}
