import type { Express } from 'express';
import { type Logger, type ReadinessCheck, createServiceApp, identityOf, route } from '@vision/shared';
import { isUuid, normaliseKey } from './domain/idempotency-key';
import type { ImageDetections } from './detections';
import { type UploadLimits, discard, parseImageUpload } from './upload/multipart';
import { checkPixelCounts } from './upload/pixel-limit';
import { invalidRequest } from '@vision/shared';

export interface AppDeps {
  logger: Logger;
  identitySecret: string;
  detections: ImageDetections;
  limits: UploadLimits & { maxPixels: number };
  readiness?: Record<string, ReadinessCheck>;
}

export const IMAGE_DETECTIONS_PATH = '/v1/vision/image-detections';

export function createApp(deps: AppDeps): Express {
  return createServiceApp(
    { name: 'images', logger: deps.logger, identitySecret: deps.identitySecret, readiness: deps.readiness },
    (app) => {
      app.post(
        IMAGE_DETECTIONS_PATH,
        route(async (req, res) => {
          const identity = identityOf(res);
          const key = req.header('idempotency-key');
          if (!isUuid(key))
            throw discard(
              req,
              deps.limits,
              invalidRequest(
                key === undefined
                  ? 'The Idempotency-Key header is required'
                  : 'The Idempotency-Key header must be a UUID',
                key === undefined ? 'idempotency_key_missing' : 'idempotency_key_invalid',
              ),
            );
          const upload = await parseImageUpload(req, deps.limits);
          await checkPixelCounts(upload.files, deps.limits.maxPixels);
          const outcome = await deps.detections.detect(
            identity,
            normaliseKey(key),
            upload.sceneCode,
            upload.files,
          );
          res.status(outcome.status).json(outcome.body);
        }),
      );
    },
  );
}
