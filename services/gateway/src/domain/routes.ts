/** Which upstream serves a public path, the methods the path has, and the body size cap at the edge. */
import { IMAGE_UPLOAD, VIDEO_UPLOAD } from '@vision/shared';

export type Upstream = 'tasks' | 'quota' | 'results' | 'images';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface RouteMatch {
  upstream: Upstream;
  /** The methods of the path (docs/openapi.yaml); HEAD is served wherever GET is. */
  methods: readonly Method[];
  /** Largest request body accepted at the edge, in bytes. */
  maxBodyBytes: number;
  /**
   * Its POST is costly work (inference, or an analytics replay): admitted or refused at the door
   * (use-cases/door.ts) before it is forwarded.
   */
  door: boolean;
}

const MiB = 1024 * 1024;
export const IMAGE_BODY_LIMIT = IMAGE_UPLOAD.maxBodyBytes;
/** 512 MB per file (SPEC 4.2) plus room for multipart boundaries and the scene field. */
export const VIDEO_BODY_LIMIT = VIDEO_UPLOAD.maxFileBytes + VIDEO_UPLOAD.framingBytes;
export const DEFAULT_BODY_LIMIT = 1 * MiB;

interface RouteRule extends RouteMatch {
  pattern: RegExp;
}

const SEGMENT = '[^/]+';
const rule = (
  path: string,
  upstream: Upstream,
  methods: Method[],
  maxBodyBytes: number,
  door = false,
): RouteRule => ({
  pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, SEGMENT)}/?$`),
  upstream,
  methods,
  maxBodyBytes,
  door,
});

/** The public API, path by path (each one documented in docs/openapi.yaml). */
const ROUTES: readonly RouteRule[] = [
  rule('/v1/vision/tasks', 'tasks', ['GET', 'POST'], DEFAULT_BODY_LIMIT, true),
  rule('/v1/vision/tasks/{task_id}', 'tasks', ['GET'], 0),
  rule('/v1/vision/tasks/{task_id}/stop', 'tasks', ['POST'], DEFAULT_BODY_LIMIT),
  rule('/v1/vision/tasks/{task_id}/results', 'results', ['GET'], 0),
  rule('/v1/vision/tasks/{task_id}/results/stream', 'results', ['GET'], 0),
  rule('/v1/vision/tasks/{task_id}/video', 'tasks', ['GET'], 0),
  rule('/v1/vision/tasks/{task_id}/snapshot', 'tasks', ['GET'], 0),
  rule('/v1/vision/tasks/{task_id}/rules', 'tasks', ['GET', 'PUT'], DEFAULT_BODY_LIMIT),
  rule('/v1/vision/tasks/{task_id}/analytics', 'results', ['GET'], 0),
  rule('/v1/vision/tasks/{task_id}/analytics/replay', 'results', ['POST'], DEFAULT_BODY_LIMIT, true),
  rule('/v1/vision/tasks/{task_id}/events', 'results', ['GET'], 0),
  rule('/v1/vision/tasks/{task_id}/events/stream', 'results', ['GET'], 0),
  rule('/v1/vision/tasks/{task_id}/events/{event_id}/snapshot', 'results', ['GET'], 0),
  rule('/v1/vision/tasks/{task_id}/tracks/{track_id}/best_shot', 'results', ['GET'], 0),
  rule('/v1/vision/video-tasks', 'tasks', ['POST'], VIDEO_BODY_LIMIT, true),
  rule('/v1/vision/image-detections', 'images', ['POST'], IMAGE_BODY_LIMIT, true),
  rule('/api/op/v1/scenes', 'tasks', ['GET'], 0),
  rule('/v1/vision/quota', 'quota', ['GET'], 0),
  rule('/v1/vision/webhooks', 'results', ['GET', 'POST'], DEFAULT_BODY_LIMIT),
  rule('/v1/vision/webhooks/{endpoint_id}', 'results', ['GET', 'DELETE'], 0),
  rule('/v1/vision/webhooks/{endpoint_id}/rotate-secret', 'results', ['POST'], DEFAULT_BODY_LIMIT),
  rule('/v1/vision/webhooks/{endpoint_id}/revoke-previous-secret', 'results', ['POST'], DEFAULT_BODY_LIMIT),
  rule('/v1/vision/webhooks/{endpoint_id}/deliveries', 'results', ['GET'], 0),
  rule('/v1/vision/webhooks/{endpoint_id}/deliveries/{delivery_id}', 'results', ['GET'], 0),
  rule(
    '/v1/vision/webhooks/{endpoint_id}/deliveries/{delivery_id}/redeliver',
    'results',
    ['POST'],
    DEFAULT_BODY_LIMIT,
  ),
];

export function matchRoute(path: string): RouteMatch | undefined {
  const found = ROUTES.find((r) => r.pattern.test(path));
  if (!found) return undefined;
  const { upstream, methods, maxBodyBytes, door } = found;
  return { upstream, methods, maxBodyBytes, door };
}

/** The value of an `Allow` header for a route: its methods, HEAD with GET, and OPTIONS. */
export function allowHeader(methods: readonly Method[]): string {
  return [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
}

/** True when `method` is one the route serves (HEAD wherever GET is). */
export function allows(methods: readonly Method[], method: string): boolean {
  return (methods as readonly string[]).includes(method) || (method === 'HEAD' && methods.includes('GET'));
}

/**
 * The route template of a public path, for span names and metrics (`/v1/vision/tasks/{task_id}/stop`):
 * task ids are replaced, a trailing slash dropped; a path of no route is `unmatched`.
 */
export function routeTemplate(path: string): string {
  if (!matchRoute(path)) return 'unmatched';
  return path
    .replace(/\/+$/, '')
    .replace(/^\/v1\/vision\/tasks\/[^/]+/, '/v1/vision/tasks/{task_id}')
    .replace(/^(\/v1\/vision\/tasks\/\{task_id\}\/events)\/(?!stream$)[^/]+/, '$1/{event_id}')
    .replace(/^(\/v1\/vision\/tasks\/\{task_id\}\/tracks)\/[^/]+/, '$1/{track_id}')
    .replace(/^\/v1\/vision\/webhooks\/[^/]+/, '/v1/vision/webhooks/{endpoint_id}')
    .replace(/^(\/v1\/vision\/webhooks\/\{endpoint_id\}\/deliveries)\/[^/]+/, '$1/{delivery_id}');
}
