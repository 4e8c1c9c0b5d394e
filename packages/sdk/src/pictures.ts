/**
 * Pictures the service answers as bytes (docs/EVIDENCE.md): an event's snapshot and a track's best
 * shot, with the frame they show.
 */
import { errorFromResponse } from './errors';

/** A picture as the service answered it. */
export interface Picture {
  /** The encoded picture (JPEG). */
  bytes: Uint8Array;
  /** Its media type, e.g. `image/jpeg`. */
  contentType: string;
  /** The `seq` of the frame it shows (`X-Frame-Seq`), when the service said. */
  seq?: number;
  /** The media time of that frame in ms (`X-Frame-Time-Ms`), when the service said. */
  frameTimeMs?: number;
  /** The picture's digest (`ETag`, quoted), when the service said. */
  etag?: string;
}

export interface PictureOptions {
  /** Only the object's box (an alert about a whole zone: the zone's bounding box), cut from the frame. */
  crop?: boolean;
  signal?: AbortSignal;
}

/** The query of a picture request. */
export const pictureQuery = (opts: PictureOptions): { crop?: 'true' } => (opts.crop ? { crop: 'true' } : {});

function integerHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  const n = Number(value);
  return value !== null && value.trim() !== '' && Number.isSafeInteger(n) ? n : undefined;
}

/** The picture of an answer read as bytes, or the typed error of a non-2xx answer. */
export async function pictureOf(
  call: Promise<{ data?: ArrayBuffer; error?: unknown; response: Response }>,
): Promise<Picture> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) throw errorFromResponse(response.status, response.headers, error);
  const { headers } = response;
  const seq = integerHeader(headers, 'x-frame-seq');
  const frameTimeMs = integerHeader(headers, 'x-frame-time-ms');
  const etag = headers.get('etag');
  return {
    bytes: new Uint8Array(data),
    contentType: headers.get('content-type') ?? 'application/octet-stream',
    ...(seq !== undefined ? { seq } : {}),
    ...(frameTimeMs !== undefined ? { frameTimeMs } : {}),
    ...(etag ? { etag } : {}),
  };
}
