import type { Express, Request, Response } from 'express';
import { type AdmissionQueue, IMAGE_UPLOAD, inTurn, identityOf, route } from '@vision/shared';
import type { SceneCatalogue } from '../catalogue/catalogue';
import type { DetectCall } from '../detect/detect-call';
import { readDetectForm } from './multipart';
import { isRawImage, readRawImage } from './raw-image';

export function mountDetectRoutes(
  app: Express,
  deps: {
    catalogue: SceneCatalogue;
    detect: DetectCall;
    admission: AdmissionQueue;
    videoStatus: () => { video_enabled: boolean; video_reason?: string };
  },
): void {
  app.get('/internal/v1/scenes', (_req, res) => {
    const video = deps.videoStatus();
    res.json({ scenes: deps.catalogue.statuses().map((s) => ({ ...s, ...video })) });
  });

  app.post(
    '/internal/v1/detect',
    route(async (req, res) => {
      // Its turn first, before the body is read; a request whose caller's deadline passed is not started.
      await inTurn(deps.admission, req, res, identityOf(res).subject, IMAGE_UPLOAD.maxBodyBytes, () =>
        detect(req, res),
      );
    }),
  );

  const detect = async (req: Request, res: Response): Promise<void> => {
    // One raw image (scene_code in the query: the images service), or a multipart batch.
    const form = isRawImage(req) ? await readRawImage(req) : await readDetectForm(req);
    res.json({ results: await deps.detect(form.sceneCode, form.images) });
  };
}
