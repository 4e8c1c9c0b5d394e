/** The scenes SPEC.md section 1 opens. Which are enabled depends on the engines installed (inference). */
export const SCENE_CODES = ['person_vehicle', 'ship', 'fishing', 'fire_smoke', 'cow_sheep'] as const;
export type SceneCode = (typeof SCENE_CODES)[number];

export const SCENE_NAMES: Record<SceneCode, string> = {
  person_vehicle: 'Persons and vehicles',
  ship: 'Ships',
  fishing: 'Fishing behaviour',
  fire_smoke: 'Fire and smoke',
  cow_sheep: 'Cattle and sheep',
};

export function isSceneCode(v: unknown): v is SceneCode {
  return typeof v === 'string' && (SCENE_CODES as readonly string[]).includes(v);
}

/** Default business threshold applied at read time when a caller gives no `min_score` (SPEC.md 4.4). */
export const DEFAULT_BUSINESS_THRESHOLD = 0.8;

/** A detection as the public API shows it (SPEC.md 2.3, 2.4). */
export interface BBox {
  format: 'cxcywh_normalized';
  cx: number;
  cy: number;
  width: number;
  height: number;
}

export interface DetectedObject {
  label: string;
  score: number;
  bbox: BBox;
  track_id?: string;
}

/** What inference reports for each scene (GET /internal/v1/scenes). */
export interface SceneStatus {
  scene_code: SceneCode;
  enabled: boolean;
  reason?: string;
  /** Which engine serves it: an ONNX model file, a rule over another scene's detections, or a built-in detector. */
  engine: string;
  labels: string[];
  lower_bound: number;
  /** False when video tasks cannot run (the decoder preflight failed); images still can. */
  video_enabled?: boolean;
  /** Why video is unavailable. */
  video_reason?: string;
}
