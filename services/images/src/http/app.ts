import type { Express } from 'express';
import {
  type AdmissionQueue,
  type Logger,
  type ReadinessCheck,
  createServiceApp,
  inTurn,
  discardBody,
  identityOf,
  parseIdempotencyKey,
  route,
  type IdentityVerifier,
} from '@vision/shared';
import type { ImageDetections } from '../use-cases/detect-images';
import { type CallRecords, mountCallRoutes } from './call-routes';
import { type UploadLimits, parseImageUpload } from './upload/multipart';
import { checkPixelCounts } from './upload/pixel-limit';

export interface AppDeps {
  logger: Logger;
  identity: IdentityVerifier;
  detections: ImageDetections;
  /** The bounded, fair queue every call waits in for its turn, before its body is read. */
  admission: AdmissionQueue;
  limits: UploadLimits & { maxPixels: number };
  readiness?: Record<string, ReadinessCheck>;
  /** The call records answered to the tasks service (GET /internal/v1/calls/{task_id}). */
  calls: CallRecords;
}

export const IMAGE_DETECTIONS_PATH = '/v1/vision/image-detections';

export function createApp(deps: AppDeps): Express {
  return createServiceApp(
    { name: 'images', logger: deps.logger, identity: deps.identity, readiness: deps.readiness },
    (app) => {
      app.post(
        IMAGE_DETECTIONS_PATH,
        route(async (req, res) => {
          const identity = identityOf(res);
          let key: string;
          try {
            key = parseIdempotencyKey(req.headers['idempotency-key']);
          } catch (err) {
            throw discardBody(req, deps.limits.maxBodyBytes, err as Error);
          }
          // Its turn first: a call refused for want of room is refused before its body is read (the
          // body is then discarded, never held), and before any claim, hold or charge.
          await inTurn(
            deps.admission,
            req,
            res,
            identity.subject,
            deps.limits.maxBodyBytes,
            async (control) => {
              const upload = await parseImageUpload(req, deps.limits);
              await checkPixelCounts(upload.files, deps.limits.maxPixels);
              const outcome = await deps.detections.detect(
                identity,
                key,
                upload.sceneCode,
                upload.files,
                control,
                upload.zones,
              );
              res.status(outcome.status).json(outcome.body);
            },
          );
        }),
      );
      mountCallRoutes(app, deps.calls);
    },
  );
}
