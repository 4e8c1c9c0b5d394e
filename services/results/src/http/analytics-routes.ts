/** Zones and lines of a video task: analytics, events (page and SSE), replay (docs/API.md). */
import type { Express } from 'express';
import {
  type AdmissionQueue,
  identityOf,
  inTurn,
  invalidRequest,
  REASON,
  refuseUnknownQuery,
  requireRules,
  route,
  type Logger,
} from '@vision/shared';
import { parseReadQuery } from '../domain/read-query';
import { resumeCursor } from '../domain/sse';
import type { AnalyticsReader } from '../use-cases/read-analytics';
import { streamPages, type StreamSettings } from '../use-cases/stream-results';
import { sseSink } from './sse-sink';

export interface AnalyticsRouteDeps {
  reader: AnalyticsReader;
  logger: Logger;
  defaultLimit: number;
  /** RESULTS_REPLAY_MAX_FRAMES: the most frames one replay request evaluates (and its default). */
  replayMaxFrames: number;
  /** The `replays` queue: replays run in their turn, bounded by wait and fair per subject (docs/OVERLOAD.md). */
  admission: AdmissionQueue;
  stream: StreamSettings;
}

const MAX_REPLAY_EVENTS = 10_000;
const DEFAULT_REPLAY_EVENTS = 1000;

/** `cursor` and `limit` of an events read; anything else (min_score included) is an unknown parameter. */
function eventsQuery(raw: Record<string, unknown>, defaultLimit: number): { cursor?: string; limit: number } {
  const q = parseReadQuery(raw, defaultLimit);
  if (q.minScore !== undefined)
    throw invalidRequest('Unknown query parameter: min_score', REASON.unknown_field, { field: 'min_score' });
  return { limit: q.limit, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}) };
}

export function mountAnalyticsRoutes(app: Express, d: AnalyticsRouteDeps): void {
  app.get(
    '/v1/vision/tasks/:taskId/analytics',
    route(async (req, res) => {
      refuseUnknownQuery(req.query as Record<string, unknown>);
      const summary = await d.reader.summary(String(req.params.taskId), identityOf(res));
      res.setHeader('Cache-Control', 'no-store');
      res.json(summary);
    }),
  );

  app.get(
    '/v1/vision/tasks/:taskId/events',
    route(async (req, res) => {
      const query = eventsQuery(req.query as Record<string, unknown>, d.defaultLimit);
      const page = await d.reader.events(String(req.params.taskId), identityOf(res), query);
      res.setHeader('Cache-Control', 'no-store');
      res.json({ items: page.items, next_cursor: page.next_cursor });
    }),
  );

  app.get(
    '/v1/vision/tasks/:taskId/events/stream',
    route(async (req, res) => {
      const identity = identityOf(res);
      const taskId = String(req.params.taskId);
      const parsed = eventsQuery(req.query as Record<string, unknown>, d.defaultLimit);
      if (parsed.cursor !== undefined) d.reader.position(taskId, parsed.cursor);
      const cursor = resumeCursor(req.header('last-event-id'), parsed.cursor);
      const read = (c: string | undefined) =>
        d.reader.events(taskId, identity, { limit: parsed.limit, ...(c !== undefined ? { cursor: c } : {}) });
      const first = await read(cursor);
      try {
        const end = await streamPages(d.stream, 'zone_event', parsed.limit, read, first, () => {
          res.status(200);
          res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
          res.setHeader('Cache-Control', 'no-store');
          res.setHeader('X-Accel-Buffering', 'no');
          res.flushHeaders();
          return sseSink(res, d.stream.stallMs, d.logger, identity.requestId);
        });
        if (end !== 'gone') res.end();
      } catch (err) {
        // The head is gone: end the stream; the client resumes from its last event id.
        d.logger.warn({ err, requestId: identity.requestId }, 'events stream ended by an error');
        res.end();
      }
    }),
  );

  app.post(
    '/v1/vision/tasks/:taskId/analytics/replay',
    route(async (req, res) => {
      const identity = identityOf(res);
      const body: unknown = req.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw invalidRequest('Request body must be a JSON object', REASON.malformed_body);
      const {
        max_events: maxEvents,
        max_frames: maxFrames,
        cursor,
        ...ruleInput
      } = body as Record<string, unknown>;
      const count = (v: unknown, field: string, min: number, max: number): number | undefined => {
        if (v === undefined) return undefined;
        if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) return v;
        throw invalidRequest(
          `Invalid field ${field}: an integer from ${min} to ${max}`,
          REASON.invalid_field,
          {
            field,
          },
        );
      };
      const events = count(maxEvents, 'max_events', 0, MAX_REPLAY_EVENTS) ?? DEFAULT_REPLAY_EVENTS;
      const frames = count(maxFrames, 'max_frames', 1, d.replayMaxFrames) ?? d.replayMaxFrames;
      if (cursor !== undefined && (typeof cursor !== 'string' || cursor.length === 0))
        throw invalidRequest(
          'Invalid field cursor: the next_cursor of the previous replay',
          REASON.invalid_field,
          {
            field: 'cursor',
          },
        );
      const rules = requireRules(ruleInput);
      const out = await inTurn(d.admission, req, res, identity.subject, 0, ({ signal }) =>
        d.reader.replay(String(req.params.taskId), identity, rules, {
          maxEvents: events,
          maxFrames: frames,
          signal,
          ...(cursor !== undefined ? { cursor } : {}),
        }),
      );
      res.setHeader('Cache-Control', 'no-store');
      res.json(out);
    }),
  );
}
