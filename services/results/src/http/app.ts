import type { Express } from 'express';
import {
  createServiceApp,
  identityOf,
  route,
  type Logger,
  type ReadinessCheck,
  type IdentityVerifier,
} from '@vision/shared';
import { parseReadQuery } from '../domain/read-query';
import { resumeCursor } from '../domain/sse';
import type { ResultsReader } from '../use-cases/read-results';
import { streamResults, type StreamSettings } from '../use-cases/stream-results';
import { mountAnalyticsRoutes, type AnalyticsRouteDeps } from './analytics-routes';
import { mountWebhookRoutes, type WebhookRouteDeps } from './webhook-routes';
import { mountEvidenceRoutes } from './evidence-routes';
import type { EvidenceReader } from '../use-cases/read-evidence';
import { sseSink } from './sse-sink';

export interface AppDeps {
  logger: Logger;
  identity: IdentityVerifier;
  reader: ResultsReader;
  defaultLimit: number;
  stream: StreamSettings;
  readiness?: Record<string, ReadinessCheck>;
  webhooks?: WebhookRouteDeps;
  analytics?: AnalyticsRouteDeps;
  /** The pictures of events and tracks. */
  evidence?: EvidenceReader;
}

/** Response header naming the score filter a read applied (default threshold, or min_score after clamping). */
export const APPLIED_MIN_SCORE_HEADER = 'X-Min-Score-Applied';

export function createApp(deps: AppDeps): Express {
  return createServiceApp(
    { name: 'results', logger: deps.logger, identity: deps.identity, readiness: deps.readiness },
    (app) => {
      if (deps.webhooks) mountWebhookRoutes(app, deps.webhooks);
      if (deps.analytics) mountAnalyticsRoutes(app, deps.analytics);
      if (deps.evidence) mountEvidenceRoutes(app, deps.evidence);
      app.get(
        '/v1/vision/tasks/:taskId/results',
        route(async (req, res) => {
          const identity = identityOf(res);
          const query = parseReadQuery(req.query as Record<string, unknown>, deps.defaultLimit);
          const { page, appliedMinScore } = await deps.reader.read(
            String(req.params.taskId),
            identity,
            query,
          );
          res.setHeader('Cache-Control', 'no-store');
          res.setHeader(APPLIED_MIN_SCORE_HEADER, String(appliedMinScore));
          res.json(page);
        }),
      );
      app.get(
        '/v1/vision/tasks/:taskId/results/stream',
        route(async (req, res) => {
          const identity = identityOf(res);
          const parsed = parseReadQuery(req.query as Record<string, unknown>, deps.defaultLimit);
          const taskId = String(req.params.taskId);
          // A `cursor` query that Last-Event-ID overrides must still be one this API gave out.
          if (parsed.cursor !== undefined) deps.reader.position(taskId, parsed.cursor);
          const cursor = resumeCursor(req.header('last-event-id'), parsed.cursor);
          const query = { limit: parsed.limit, minScore: parsed.minScore, ...(cursor ? { cursor } : {}) };
          let opened = false;
          try {
            const end = await streamResults(
              deps.reader,
              deps.stream,
              { taskId, identity, query },
              (appliedMinScore) => {
                opened = true;
                res.status(200);
                res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
                res.setHeader('Cache-Control', 'no-store');
                res.setHeader('X-Accel-Buffering', 'no');
                res.setHeader(APPLIED_MIN_SCORE_HEADER, String(appliedMinScore));
                res.flushHeaders();
                return sseSink(res, deps.stream.stallMs, deps.logger, identity.requestId);
              },
            );
            if (end !== 'gone') res.end();
          } catch (err) {
            if (!opened) throw err;
            // The head is gone: end the stream; the client resumes from its last event id.
            deps.logger.warn({ err, requestId: identity.requestId }, 'results stream ended by an error');
            res.end();
          }
        }),
      );
    },
  );
}
