/** The pictures of a task's events and tracks (docs/API.md, "Zones, lines and their events"). */
import type { Express, Response } from 'express';
import {
  EVENT_ID_RE,
  identityOf,
  invalidRequest,
  REASON,
  refuseUnknownQuery,
  route,
  TRACK_ID_RE,
} from '@vision/shared';
import type { EvidenceReader, StoredPicture } from '../use-cases/read-evidence';

/** `crop`, `true` or `false` (absent: false); any other parameter is unknown. */
function cropOf(query: Record<string, unknown>): boolean {
  refuseUnknownQuery(query, ['crop']);
  const v = query.crop;
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  throw invalidRequest('crop must be true or false', REASON.invalid_field, { field: 'crop' });
}

function idOf(raw: unknown, re: RegExp, field: string): string {
  const v = String(raw);
  if (!re.test(v)) throw invalidRequest(`${field} is malformed`, REASON.invalid_field, { field });
  return v;
}

function send(res: Response, p: StoredPicture, cacheControl: string): void {
  res
    .status(200)
    .set({
      'content-type': 'image/jpeg',
      'cache-control': cacheControl,
      etag: p.etag,
      'x-frame-seq': String(p.seq),
      ...(p.frameTimeMs !== null ? { 'x-frame-time-ms': String(Math.round(p.frameTimeMs)) } : {}),
      // A best shot says which rule its box met (docs/EVIDENCE.md): the size rule, or the fallback and why.
      ...(p.rule !== undefined ? { 'x-best-shot-rule': p.rule } : {}),
    })
    .end(p.body);
}

export function mountEvidenceRoutes(app: Express, reader: EvidenceReader): void {
  app.get(
    '/v1/vision/tasks/:taskId/events/:eventId/snapshot',
    route(async (req, res) => {
      const crop = cropOf(req.query as Record<string, unknown>);
      const eventId = idOf(req.params.eventId, EVENT_ID_RE, 'event_id');
      const p = await reader.eventPicture(String(req.params.taskId), identityOf(res), eventId, crop);
      send(res, p, 'private, max-age=3600');
    }),
  );

  app.get(
    '/v1/vision/tasks/:taskId/tracks/:trackId/best_shot',
    route(async (req, res) => {
      const crop = cropOf(req.query as Record<string, unknown>);
      const trackId = idOf(req.params.trackId, TRACK_ID_RE, 'track_id');
      const p = await reader.bestShot(String(req.params.taskId), identityOf(res), trackId, crop);
      send(res, p, 'no-cache');
    }),
  );
}
