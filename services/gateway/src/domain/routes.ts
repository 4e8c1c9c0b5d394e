/** Which upstream serves a public path, and the body size cap at the edge for it. */
import { IMAGE_UPLOAD, VIDEO_UPLOAD } from '@vision/shared';

export type Upstream = 'tasks' | 'quota' | 'results' | 'images';

export interface RouteMatch {
  upstream: Upstream;
  /** Largest request body accepted at the edge, in bytes; undefined = the default small cap. */
  maxBodyBytes: number;
}

const MiB = 1024 * 1024;
export const IMAGE_BODY_LIMIT = IMAGE_UPLOAD.maxBodyBytes;
/** 512 MB per file (SPEC 4.2) plus room for multipart boundaries and the scene field. */
export const VIDEO_BODY_LIMIT = VIDEO_UPLOAD.maxFileBytes + VIDEO_UPLOAD.framingBytes;
export const DEFAULT_BODY_LIMIT = 1 * MiB;

const RESULTS = /^\/v1\/vision\/tasks\/[^/]+\/results\/?$/;
const TASKS = /^\/v1\/vision\/tasks(\/.*)?$/;

export function matchRoute(path: string): RouteMatch | undefined {
  if (RESULTS.test(path)) return { upstream: 'results', maxBodyBytes: DEFAULT_BODY_LIMIT };
  if (TASKS.test(path)) return { upstream: 'tasks', maxBodyBytes: DEFAULT_BODY_LIMIT };
  if (path === '/v1/vision/video-tasks' || path === '/v1/vision/video-tasks/')
    return { upstream: 'tasks', maxBodyBytes: VIDEO_BODY_LIMIT };
  if (path === '/v1/vision/image-detections' || path === '/v1/vision/image-detections/')
    return { upstream: 'images', maxBodyBytes: IMAGE_BODY_LIMIT };
  if (path === '/api/op/v1/scenes' || path === '/api/op/v1/scenes/')
    return { upstream: 'tasks', maxBodyBytes: 0 };
  if (path === '/v1/vision/quota' || path === '/v1/vision/quota/')
    return { upstream: 'quota', maxBodyBytes: 0 };
  return undefined;
}
