import CircuitBreaker from 'opossum';
import type { ServiceClient } from '@vision/shared';
import {
  ApiError,
  type Clock,
  type Identity,
  type SceneStatus,
  UnreachableError,
  isSceneCode,
  observeBreaker,
} from '@vision/shared';
import { CONTENT_TYPES, type ImageType } from '../domain/image-type';
import { type ImageObject, toImageObject } from '../domain/results';

export interface BreakerOptions {
  timeoutMs: number;
  errorThresholdPercentage: number;
  resetTimeoutMs: number;
  volumeThreshold: number;
}

/** What inference said about one image. */
export type DetectOutcome =
  | { status: 'succeeded'; objects: ImageObject[] }
  | { status: 'failed'; failure: 'inference_unavailable' | 'inference_rejected'; reason: string };

interface WireResult {
  seq: number;
  status: 'succeeded' | 'failed';
  objects?: { label: string; score: number; bbox: ImageObject['bbox']; track_id?: string }[];
  reason?: string;
}

/** Inference answered, but refused the request itself (4xx): not a sign that inference is down. */
class RefusedByInference extends Error {
  constructor(readonly status: number) {
    super(`inference refused the request (${status})`);
  }
}

/**
 * The inference backend's detect and scene calls (docs/INTERNAL.md, inference). Every detect call
 * goes through an opossum breaker: transport errors, timeouts and 5xx count as failures, a 4xx does not.
 */
export class InferenceClient {
  readonly breaker: CircuitBreaker<[Identity, string, Buffer, ImageType], WireResult>;
  private scenes?: { at: number; list: SceneStatus[] };

  constructor(
    private readonly client: ServiceClient,
    breaker: BreakerOptions,
    private readonly clock: Clock,
    private readonly sceneCacheMs: number,
  ) {
    this.breaker = new CircuitBreaker(
      (identity: Identity, scene: string, data: Buffer, type: ImageType) =>
        this.detectOnce(identity, scene, data, type, breaker.timeoutMs),
      {
        timeout: breaker.timeoutMs,
        errorThresholdPercentage: breaker.errorThresholdPercentage,
        resetTimeout: breaker.resetTimeoutMs,
        volumeThreshold: breaker.volumeThreshold,
        errorFilter: (err: unknown) => err instanceof RefusedByInference,
      },
    );
    observeBreaker(this.breaker, 'inference');
  }

  /** True while the breaker is open (not half-open): new requests are refused before any work. */
  isOpen(): boolean {
    return this.breaker.opened && !this.breaker.halfOpen;
  }

  async detect(identity: Identity, scene: string, data: Buffer, type: ImageType): Promise<DetectOutcome> {
    let wire: WireResult;
    try {
      wire = await this.breaker.fire(identity, scene, data, type);
    } catch (err) {
      if (err instanceof RefusedByInference)
        return { status: 'failed', failure: 'inference_rejected', reason: `refused_${err.status}` };
      return { status: 'failed', failure: 'inference_unavailable', reason: errorReason(err) };
    }
    if (wire.status === 'succeeded' && Array.isArray(wire.objects))
      return { status: 'succeeded', objects: wire.objects.map(toImageObject) };
    const reason = wire.reason ?? 'failed';
    // Inference names decode problems (the image's fault); "detection failed" is its own fault.
    return {
      status: 'failed',
      failure: reason === 'detection failed' ? 'inference_unavailable' : 'inference_rejected',
      reason,
    };
  }

  private async detectOnce(
    identity: Identity,
    scene: string,
    data: Buffer,
    type: ImageType,
    timeoutMs: number,
  ): Promise<WireResult> {
    const form = new FormData();
    form.append('scene_code', scene);
    form.append('files', new Blob([data], { type: CONTENT_TYPES[type] }), `0.${type}`);
    const r = await this.client.call<{ results?: WireResult[] }>('/internal/v1/detect', {
      identity,
      body: form,
      timeoutMs,
    });
    if (r.status >= 500) throw new Error(`inference answered ${r.status}`);
    if (r.status !== 200) throw new RefusedByInference(r.status);
    const first = Array.isArray(r.body?.results) ? r.body.results.find((x) => x.seq === 0) : undefined;
    if (!first) throw new Error('inference answered without a result for the image');
    return first;
  }

  /**
   * The scene if inference lists it as enabled; throws OP-TASK-SCENE-UNAVAILABLE otherwise, and
   * OP-TASK-UPSTREAM-DOWN when the list cannot be had (and none is cached).
   */
  async requireEnabledScene(identity: Identity, sceneCode: string): Promise<SceneStatus> {
    if (!isSceneCode(sceneCode))
      throw new ApiError('OP-TASK-SCENE-UNAVAILABLE', `Unknown scene "${sceneCode}"`, {
        scene_code: sceneCode,
      });
    const list = await this.sceneList(identity);
    const scene = list.find((s) => s.scene_code === sceneCode);
    if (!scene || !scene.enabled)
      throw new ApiError('OP-TASK-SCENE-UNAVAILABLE', `Scene "${sceneCode}" is not enabled`, {
        scene_code: sceneCode,
        ...(scene?.reason ? { reason: scene.reason } : {}),
      });
    return scene;
  }

  private async sceneList(identity: Identity): Promise<SceneStatus[]> {
    const now = this.clock.now().getTime();
    if (this.scenes && now - this.scenes.at < this.sceneCacheMs) return this.scenes.list;
    try {
      const r = await this.client.call<{ scenes?: SceneStatus[] }>('/internal/v1/scenes', {
        identity,
        timeoutMs: 5000,
      });
      if (r.status === 200 && Array.isArray(r.body?.scenes)) {
        this.scenes = { at: now, list: r.body.scenes };
        return r.body.scenes;
      }
    } catch (err) {
      if (!(err instanceof UnreachableError)) throw err;
    }
    // A stale list beats refusing every request while inference restarts.
    if (this.scenes) return this.scenes.list;
    throw new ApiError('OP-TASK-UPSTREAM-DOWN', 'The inference backend is unavailable, retry later');
  }

  shutdown(): void {
    this.breaker.shutdown();
  }
}

function errorReason(err: unknown): string {
  if (err instanceof UnreachableError) return err.timedOut ? 'timeout' : 'unreachable';
  const code = (err as { code?: unknown }).code;
  if (code === 'EOPENBREAKER') return 'breaker_open';
  if (code === 'ETIMEDOUT') return 'timeout';
  return 'error';
}
