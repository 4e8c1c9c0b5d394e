import { createHash } from 'node:crypto';

/**
 * The idempotency fingerprint of an image detection request (DESIGN.md 3): the endpoint, the scene
 * after defaults and the sha256 of every file in upload order. Two requests with one key are "the same
 * request" exactly when their fingerprints are equal.
 */
export function requestFingerprint(sceneCode: string, fileSha256s: readonly string[]): string {
  const canonical = JSON.stringify({
    endpoint: 'POST /v1/vision/image-detections',
    scene_code: sceneCode,
    files: fileSha256s,
  });
  return createHash('sha256').update(canonical).digest('hex');
}

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
