/** The meaning of a create request, compared on idempotent replays (DESIGN.md section 3). Pure. */
import { createHash } from 'node:crypto';

/**
 * `stream_url_digest`: the keyed digest of the stream URL (StreamUrlSeal.digest), never the URL itself, which
 * may carry a password. `rules`: the canonical JSON of the zones and lines given, absent when none were (so
 * older keys keep their meaning).
 */
export type CreateMeaning =
  | { endpoint: 'tasks'; scene_code: string; stream_url_digest: string; rules?: string }
  | { endpoint: 'video-tasks'; scene_code: string; file_sha256: string; rules?: string };

const sha256 = (parts: string[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

export function fingerprintOf(m: CreateMeaning): string {
  const parts =
    m.endpoint === 'tasks'
      ? ['POST /v1/vision/tasks#keyed', m.scene_code, m.stream_url_digest]
      : ['POST /v1/vision/video-tasks', m.scene_code, m.file_sha256];
  if (m.rules !== undefined) parts.push(m.rules);
  return sha256(parts);
}

/**
 * The fingerprint a stream task's create had when the plain URL went into it: a claim stored that way (by a
 * replica of an earlier release during a rolling upgrade) still has the same meaning. Compared, never stored.
 */
export function plainUrlFingerprintOf(m: { scene_code: string; stream_url: string; rules?: string }): string {
  const parts = ['POST /v1/vision/tasks', m.scene_code, m.stream_url];
  if (m.rules !== undefined) parts.push(m.rules);
  return sha256(parts);
}
