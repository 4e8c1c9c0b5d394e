/** Built-in classical fire/smoke detector (used when no fire/smoke ONNX model is configured). */
export { detectFireSmokeImage, analyzeFrame, DEFAULT_FIRE_SMOKE_OPTIONS } from './image-detector';
export type { FireSmokeOptions, FireCandidate, SmokeCandidate, FrameAnalysis } from './image-detector';
export { FireSmokeVideoDetector, DEFAULT_FIRE_SMOKE_VIDEO_OPTIONS } from './video-detector';
export type { FireSmokeVideoOptions } from './video-detector';
export {
  FIRE_FEATURE_NAMES,
  DEFAULT_FIRE_SCORE_MODEL,
  BUILTIN_FIRE_SMOKE_LOWER_BOUND,
  logisticScore,
} from './score';
export type { FireScoreModel } from './score';
export { isFlamePixel, isSmokePixel, rgbToYCbCr } from './color';
export { labelComponents } from './components';
export { dilate, erode, close, open } from './morphology';
export { mergeNearBoxes } from './boxes';
