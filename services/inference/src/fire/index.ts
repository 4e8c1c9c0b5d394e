/** Built-in classical fire/smoke detector (used when no fire/smoke ONNX model is configured). */
export { detectFireSmokeImage, analyzeFrame, DEFAULT_FIRE_SMOKE_OPTIONS } from './image-detector';
export type { FireSmokeOptions, FireCandidate, SmokeCandidate, FrameAnalysis } from './image-detector';
export { FIRE_FEATURE_NAMES, DEFAULT_FIRE_SCORE_MODEL, logisticScore } from './score';
export type { FireScoreModel } from './score';
