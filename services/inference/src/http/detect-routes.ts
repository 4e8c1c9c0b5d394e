import type { Express, Request, Response } from 'express';
import {
  type AdmissionQueue,
  ApiError,
  IMAGE_UPLOAD,
  REASON,
  inTurn,
  identityOf,
  invalidRequest,
  isSceneCode,
  route,
} from '@vision/shared';
import type { SceneCatalogue } from '../catalogue/catalogue';
import { detectImages } from '../detect/detect-images';
import { PixelBudget } from '../detect/pixel-budget';
import { readDetectForm } from './multipart';
import { isRawImage, readRawImage } from './raw-image';

export function mountDetectRoutes(
  app: Express,
  deps: {
    catalogue: SceneCatalogue;
    maxPixels: number;
    admission: AdmissionQueue;
    videoStatus: () => { video_enabled: boolean; video_reason?: string };
  },
): void {
  // Two images at the cap decode at once, whatever the number of requests: 16 requests of ten 6000x6600
  // images must not exhaust memory while live jobs run (services/inference/test/decode-bound.test.ts).
  const budget = new PixelBudget(2 * deps.maxPixels);
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
    if (form.sceneCode === undefined)
      throw invalidRequest('scene_code is required', 'missing_field', { field: 'scene_code' });
    if (!isSceneCode(form.sceneCode))
      throw invalidRequest(`Unknown scene_code`, 'unknown_scene', { field: 'scene_code' });
    if (form.images.length === 0)
      throw invalidRequest('At least one file is required', 'missing_field', { field: 'files' });
    const engine = deps.catalogue.engine(form.sceneCode);
    if (!engine) {
      const status = deps.catalogue.status(form.sceneCode);
      throw new ApiError('OP-TASK-SCENE-UNAVAILABLE', 'Scene is not enabled', {
        scene_code: form.sceneCode,
        reason: REASON.scene_disabled,
        ...(status?.reason ? { scene_reason: status.reason } : {}),
      });
    }
    const results = await detectImages(engine, form.images, { maxPixels: deps.maxPixels, budget });
    res.json({ results });
  };
}
