/**
 * Score calibration: a logistic model over region features. The default weights were fitted by
 * scripts/eval-fire.js (`--fit`) with L2-regularised logistic regression on the even-id half of
 * ../shared/datasets/dfire-valid (a candidate region counts as fire when at least half of its box lies
 * inside a labelled fire box); the odd-id half is held out. See docs/MODELS.md "fire_smoke".
 */

/** Names of the region features, in the order of `FireScoreModel.weights`. */
export const FIRE_FEATURE_NAMES = [
  'logArea',
  'fill',
  'crMinusCb',
  'brightFrac',
  'contrast',
  'lumaStd',
  'red',
  'imageLuma',
] as const;

export type FireFeatureVector = number[];

export interface FireScoreModel {
  bias: number;
  weights: number[];
}

export const DEFAULT_FIRE_SCORE_MODEL: FireScoreModel = {
  bias: -1.121,
  weights: [0.632, 0.109, -2.785, 1.677, -12.948, 2.287, 13.298, -14.262],
};

export function sigmoid(z: number): number {
  if (z >= 0) return 1 / (1 + Math.exp(-z));
  const e = Math.exp(z);
  return e / (1 + e);
}

export function logisticScore(model: FireScoreModel, features: FireFeatureVector): number {
  if (features.length !== model.weights.length) {
    throw new Error(`feature vector has ${features.length} entries, model expects ${model.weights.length}`);
  }
  let z = model.bias;
  for (let i = 0; i < features.length; i++) z += model.weights[i] * features[i];
  return sigmoid(z);
}

/**
 * Scene lower bound chosen for the built-in detector: the bound with the best image-level F0.5 on the
 * even-id half of dfire-valid (scripts/eval-fire.js). Detections below it should not be published.
 */
export const BUILTIN_FIRE_SMOKE_LOWER_BOUND = 0.5;
