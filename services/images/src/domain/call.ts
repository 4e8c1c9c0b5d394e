/**
 * The shapes an image call is made of, below both the HTTP layer that reads them and the use cases that
 * run them: an uploaded image, one attempt at a call, and a call whose spend went to quota.
 */
import type { ClaimRef } from '@vision/shared';
import type { ImageType } from './image-type';
import type { ImageResult } from './results';

/** One image of a request, as read from its multipart body (sniffed type, sha256 of its bytes). */
export interface UploadedImage {
  seq: number;
  type: ImageType;
  data: Buffer;
  sha256: string;
}

/** One attempt at one image call: its claim, task id and scene. */
export interface CallRef {
  ref: ClaimRef;
  taskId: string;
  sceneCode: string;
}

/** A call whose spend went to quota: its claim, task id, scene and stored results. */
export interface SpentCall extends CallRef {
  results: readonly ImageResult[];
}
