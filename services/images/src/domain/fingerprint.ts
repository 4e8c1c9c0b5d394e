import { createHash } from 'node:crypto';

/**
 * The idempotency fingerprint of an image detection request (DESIGN.md 3): the endpoint, the scene
 * after defaults, the sha256 of every file in upload order and, when the call carries zones, their canonical
 * JSON. Two requests with one key are "the same request" exactly when their fingerprints are equal.
 */
export function requestFingerprint(
  sceneCode: string,
  fileSha256s: readonly string[],
  zones?: string,
): string {
  const canonical = JSON.stringify({
    endpoint: 'POST /v1/vision/image-detections',
    scene_code: sceneCode,
    files: fileSha256s,
    ...(zones !== undefined ? { zones } : {}),
  });
  return createHash('sha256').update(canonical).digest('hex');
}

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
