import type { Express } from 'express';
import { createServiceApp, identityOf, route, type Logger, type ReadinessCheck } from '@vision/shared';
import { parseReadQuery } from '../domain/read-query';
import type { ResultsReader } from '../use-cases/read-results';

export interface AppDeps {
  logger: Logger;
  identitySecret: string;
  reader: ResultsReader;
  defaultLimit: number;
  readiness?: Record<string, ReadinessCheck>;
}

/** Response header naming the score filter a read applied (default threshold, or min_score after clamping). */
export const APPLIED_MIN_SCORE_HEADER = 'X-Min-Score-Applied';

export function createApp(deps: AppDeps): Express {
  return createServiceApp(
    { name: 'results', logger: deps.logger, identitySecret: deps.identitySecret, readiness: deps.readiness },
    (app) => {
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
    },
  );
}
