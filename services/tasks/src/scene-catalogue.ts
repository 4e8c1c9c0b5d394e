/** The scene list: what inference reports (cached briefly) merged with names and the business threshold. */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  type Clock,
  type Logger,
  SCENE_NAMES,
  type SceneStatus,
  isSceneCode,
} from '@vision/shared';
import type { InferenceClient } from './clients/inference-client';

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

export class SceneCatalogue {
  private cached?: { at: number; scenes: SceneStatus[] };
  private inflight?: Promise<SceneStatus[]>;

  constructor(
    private readonly inference: InferenceClient,
    private readonly opts: { cacheMs: number; staleMs: number; businessThreshold: number },
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  private async fetch(): Promise<SceneStatus[]> {
    const now = this.clock.now().getTime();
    if (this.cached && now - this.cached.at <= this.opts.cacheMs) return this.cached.scenes;
    this.inflight ??= this.inference
      .scenes({ subject: 'tasks-service', requestId: `scenes-${randomUUID()}` })
      .then((scenes) => {
        this.cached = { at: this.clock.now().getTime(), scenes };
        return scenes;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    try {
      return await this.inflight;
    } catch (err) {
      if (this.cached && now - this.cached.at <= this.opts.staleMs) {
        this.logger.warn({ err }, 'scene list unavailable; using the last copy');
        return this.cached.scenes;
      }
      throw new ApiError(
        'OP-SYS-UNAVAILABLE',
        'The scene list is unavailable (inference unreachable), retry later',
      );
    }
  }

  async list(): Promise<PublicScene[]> {
    const scenes = await this.fetch();
    return scenes.map((s) => ({
      scene_code: s.scene_code,
      name: isSceneCode(s.scene_code) ? SCENE_NAMES[s.scene_code] : s.scene_code,
      enabled: s.enabled,
      ...(s.reason ? { reason: s.reason } : {}),
      engine: s.engine,
      labels: s.labels,
      lower_bound: s.lower_bound,
      default_business_threshold: this.opts.businessThreshold,
      ...(s.video_enabled === false
        ? { video_enabled: false, ...(s.video_reason ? { video_reason: s.video_reason } : {}) }
        : { video_enabled: true }),
    }));
  }

  /**
   * The gate of video task creation, before anything is charged: the enabled scene `code` (else
   * OP-TASK-SCENE-UNAVAILABLE), and 503 OP-SYS-UNAVAILABLE while inference cannot decode video (its
   * decoder preflight failed).
   */
  async requireVideoScene(code: unknown): Promise<SceneStatus> {
    const scene = await this.requireEnabled(code);
    if (scene.video_enabled === false)
      throw new ApiError(
        'OP-SYS-UNAVAILABLE',
        'Video tasks are unavailable: the video decoder is not working',
        {
          reason: 'decoder_unavailable',
        },
      );
    return scene;
  }

  /** The enabled scene `code`, or OP-TASK-SCENE-UNAVAILABLE. */
  async requireEnabled(code: unknown): Promise<SceneStatus> {
    if (typeof code !== 'string' || !isSceneCode(code))
      throw new ApiError('OP-TASK-SCENE-UNAVAILABLE', 'scene_code does not exist or is not enabled', {
        scene_code: typeof code === 'string' ? code.slice(0, 64) : null,
      });
    const scene = (await this.fetch()).find((s) => s.scene_code === code);
    if (!scene || !scene.enabled)
      throw new ApiError('OP-TASK-SCENE-UNAVAILABLE', 'scene_code does not exist or is not enabled', {
        scene_code: code,
        ...(scene?.reason ? { scene_reason: scene.reason } : {}),
      });
    return scene;
  }
}
