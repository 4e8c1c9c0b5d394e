/**
 * Zones on an image detection call (docs/ANALYTICS.md, "Images"): the `zones` text field read and validated by
 * the shared rule validation, and each succeeded image's objects counted per zone by the shared pure function for one image
 * (packages/shared/src/places). Lines need time and are not accepted here.
 */
import {
  REASON,
  type FrameSize,
  type ZoneRule,
  canonicalJson,
  countImageZones,
  cxcywhToBox,
  invalidRequest,
  requireRules,
} from '@vision/shared';
import type { ImageResult } from './results';

export const ZONES_FIELD = 'zones';
/** The longest `zones` text field, in bytes (docs/openapi.yaml). */
export const MAX_ZONES_FIELD_BYTES = 65536;

/** The zones of a call as the text field carried them; undefined when it had none (absent or `[]`). */
export function zonesOfField(text: string | undefined): ZoneRule[] | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    throw invalidRequest(`Invalid field ${ZONES_FIELD}: must be a JSON array`, REASON.invalid_field, {
      field: ZONES_FIELD,
    });
  }
  const { zones } = requireRules({ zones: parsed });
  return zones.length > 0 ? zones : undefined;
}

/** The zones' canonical JSON (part of the call's fingerprint: other zones are another request). */
export function zonesFingerprint(zones: readonly ZoneRule[]): string {
  return canonicalJson(zones);
}

/**
 * Each succeeded image with its counts per zone, in the zones' order, decided on the image's pixels (`sizes`:
 * each succeeded image's size, by seq; an image of unknown size has no object in any zone).
 */
export function withZoneCounts(
  results: readonly ImageResult[],
  sizes: ReadonlyMap<number, FrameSize>,
  zones: readonly ZoneRule[],
): ImageResult[] {
  return results.map((r) => {
    if (r.status !== 'succeeded') return r;
    const size = sizes.get(r.seq) ?? { width: 0, height: 0 };
    const objects = r.objects.map((o) => ({
      label: o.label,
      score: o.score,
      box: cxcywhToBox(o.bbox.cx, o.bbox.cy, o.bbox.width, o.bbox.height),
    }));
    return { ...r, zones: countImageZones(zones, objects, size) };
  });
}
