/** The public scene list: the shared scene gate's list merged with names and the business threshold. */
import { SCENE_NAMES, type SceneGate, isSceneCode } from '@vision/shared';

export interface PublicScene {
  scene_code: string;
  name: string;
  enabled: boolean;
  reason?: string;
  engine: string;
  labels: string[];
  lower_bound: number;
  default_business_threshold: number;
  video_enabled?: boolean;
  video_reason?: string;
}

export async function publicScenes(gate: SceneGate, businessThreshold: number): Promise<PublicScene[]> {
  const scenes = await gate.list();
  return scenes.map((s) => ({
    scene_code: s.scene_code,
    name: isSceneCode(s.scene_code) ? SCENE_NAMES[s.scene_code] : s.scene_code,
    enabled: s.enabled,
    ...(s.reason ? { reason: s.reason } : {}),
    engine: s.engine,
    labels: s.labels,
    lower_bound: s.lower_bound,
    default_business_threshold: businessThreshold,
    ...(s.video_enabled === false
      ? { video_enabled: false, ...(s.video_reason ? { video_reason: s.video_reason } : {}) }
      : { video_enabled: true }),
  }));
}
