import { ApiError, REASON, invalidRequest, isSceneCode } from '@vision/shared';
import type { SceneCatalogue } from '../catalogue/catalogue';
import { type ImageInput, type ImageResult, detectImages } from './detect-images';
import { PixelBudget } from './pixel-budget';

/** Detects a batch of images with one scene: what a detect call does once it has its turn and its images. */
export type DetectCall = (
  sceneCode: string | undefined,
  images: readonly ImageInput[],
) => Promise<ImageResult[]>;

/**
 * The detect call of inference, whoever calls it (the HTTP route, or the images service in this process):
 * the scene checked, then its engine over the images. Two images at the cap decode at once, whatever the
 * number of calls and however they came: 16 calls of ten 6000x6600 images must not exhaust memory while
 * live jobs run (services/inference/test/decode-bound.test.ts).
 */
export function createDetectCall(deps: { catalogue: SceneCatalogue; maxPixels: number }): DetectCall {
  const budget = new PixelBudget(2 * deps.maxPixels);
  return async (sceneCode, images) => {
    if (sceneCode === undefined)
      throw invalidRequest('scene_code is required', 'missing_field', { field: 'scene_code' });
    if (!isSceneCode(sceneCode))
      throw invalidRequest(`Unknown scene_code`, 'unknown_scene', { field: 'scene_code' });
    if (images.length === 0)
      throw invalidRequest('At least one file is required', 'missing_field', { field: 'files' });
    const engine = deps.catalogue.engine(sceneCode);
    if (!engine) {
      const status = deps.catalogue.status(sceneCode);
      throw new ApiError('OP-TASK-SCENE-UNAVAILABLE', 'Scene is not enabled', {
        scene_code: sceneCode,
        reason: REASON.scene_disabled,
        ...(status?.reason ? { scene_reason: status.reason } : {}),
      });
    }
    return detectImages(engine, images, { maxPixels: deps.maxPixels, budget });
  };
}
