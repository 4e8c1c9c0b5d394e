/**
 * The one scene gate of the create endpoints (tasks and images): the scene list inference reports,
 * cached briefly (a stale copy is answered while a fresh one is fetched), and the check that a
 * `scene_code` names an enabled scene. Answers (SPEC.md 7, docs/API.md "Scenes"):
 * - unknown code, or a scene not enabled: 400 OP-TASK-SCENE-UNAVAILABLE, `details.reason`
 *   `unknown_scene` or `scene_disabled` (with the scene's own `scene_reason`);
 * - the list cannot be had and no copy is left: 503 OP-TASK-UPSTREAM-DOWN (inference unreachable);
 * - video tasks only (requireVideoScene): 503 OP-SYS-UNAVAILABLE `decoder_unavailable` while inference
 *   cannot decode video (its decoder preflight failed: the scene reports `video_enabled: false`).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../time/clock';
import { ApiError } from '../contract/errors';
import type { Logger } from '../telemetry/logger';
import { REASON } from '../contract/reasons';
import { type SceneCode, type SceneStatus, isSceneCode } from '../contract/scenes';
import type { InferenceClient } from './inference-client';

export interface SceneGateSettings {
  /** How long a fetched list is used without asking again. */
  cacheMs: number;
  /** How long the last list may still be answered while a fresh one is fetched (or cannot be). */
  staleMs: number;
}

export class SceneGate {
  private cached?: { at: number; scenes: SceneStatus[] };
  private inflight?: Promise<SceneStatus[]>;

  constructor(
    private readonly inference: Pick<InferenceClient, 'scenes' | 'state'>,
    private readonly settings: SceneGateSettings,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly caller = 'scene-gate',
  ) {}

  /**
   * Every scene inference reports, enabled or not. A copy older than `cacheMs` but within `staleMs` is
   * answered at once while a fresh list is fetched in the background: a call never waits on the scene list
   * and then on its own request to a backend that does not answer. That background fetch is made only while
   * the breaker is closed: half-open, the trial belongs to a caller's own call. Only a gate with no usable
   * copy waits for the list (its fetch is its caller's call, which may be the trial).
   */
  async list(): Promise<SceneStatus[]> {
    const age = this.cached ? this.clock.now().getTime() - this.cached.at : Number.POSITIVE_INFINITY;
    if (this.cached && age <= this.settings.cacheMs) return this.cached.scenes;
    if (this.cached && age <= this.settings.staleMs) {
      if (this.inference.state() === 'closed') void this.refresh().catch(() => undefined);
      return this.cached.scenes;
    }
    const fetching = this.refresh();
    try {
      return await fetching;
    } catch {
      throw new ApiError(
        'OP-TASK-UPSTREAM-DOWN',
        'The scene list is unavailable (inference unreachable), retry later',
        undefined,
        { 'Retry-After': '10' },
      );
    }
  }

  /** One fetch of the list at a time; its failure is logged once (and thrown to those who wait for it). */
  private refresh(): Promise<SceneStatus[]> {
    if (this.inflight) return this.inflight;
    const fetching = this.inference
      .scenes({ subject: this.caller, requestId: `scenes-${randomUUID()}` })
      .then((scenes) => {
        this.cached = { at: this.clock.now().getTime(), scenes };
        return scenes;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    fetching.catch((err: unknown) => {
      this.logger.warn(
        { err },
        this.cached ? 'scene list unavailable; using the last copy' : 'scene list unavailable',
      );
    });
    this.inflight = fetching;
    return fetching;
  }

  /**
   * `code` when it is one of the fixed scene codes (enabled or not), else OP-TASK-SCENE-UNAVAILABLE: a check
   * without I/O, for callers that must refuse a value that is no scene code before they store it (it may hold
   * bytes a database refuses, such as NUL).
   */
  requireSceneCode(code: unknown): SceneCode {
    if (typeof code !== 'string' || !isSceneCode(code))
      throw new ApiError('OP-TASK-SCENE-UNAVAILABLE', 'scene_code does not exist or is not enabled', {
        reason: REASON.unknown_scene,
        scene_code: typeof code === 'string' ? code.slice(0, 64) : null,
      });
    return code;
  }

  /** The enabled scene `code`, or OP-TASK-SCENE-UNAVAILABLE. */
  async requireEnabled(code: unknown): Promise<SceneStatus> {
    this.requireSceneCode(code);
    const scene = (await this.list()).find((s) => s.scene_code === code);
    if (!scene || !scene.enabled)
      throw new ApiError('OP-TASK-SCENE-UNAVAILABLE', 'scene_code does not exist or is not enabled', {
        reason: scene ? REASON.scene_disabled : REASON.unknown_scene,
        scene_code: code,
        ...(scene?.reason ? { scene_reason: scene.reason } : {}),
      });
    return scene;
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
        { reason: REASON.decoder_unavailable },
      );
    return scene;
  }
}
