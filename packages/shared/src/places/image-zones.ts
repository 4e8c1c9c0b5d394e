import { addCount, type Counts } from './counts';
import { PolygonCover, reachesCoverage } from './coverage';
import {
  anchorPoint,
  hasPixels,
  inPixels,
  pointInPolygon,
  pointsInPixels,
  polygonBounds,
  type Box,
  type FrameSize,
} from './geometry';
import type { ZoneRule } from './rules';

/**
 * Zones over one image's detections (no tracks, no time): per zone, the watched objects counted in it by label
 * (`*`: all). An anchor zone counts an object whose anchor lies in the polygon (edges included); a coverage zone
 * counts an object whose box overlaps the polygon with positive area, and also reports the covered fraction and
 * whether it reaches the zone's `coverage` threshold. As on a video frame, everything is decided on the image's
 * pixels (boxes and polygons scaled by its width and height); an image without pixels has no object in any zone.
 * Hysteresis, dwell and occupancy alerts need time and do not apply.
 */
export interface ImageZoneCounts {
  zone_id: string;
  counts: Counts;
  coverage?: { fraction: number; triggered: boolean };
}

export interface ImageObject {
  label: string;
  score: number;
  box: Box;
}

export function countImageZones(
  zones: readonly ZoneRule[],
  objects: readonly ImageObject[],
  size: FrameSize,
): ImageZoneCounts[] {
  const seen = hasPixels(size) ? objects.map((o) => ({ ...o, px: inPixels(o.box, size) })) : [];
  return zones.map((zone) => {
    const polygon = pointsInPixels(zone.polygon, size);
    const bounds = polygonBounds(polygon);
    const cover = new PolygonCover(polygon);
    const labels = zone.labels && zone.labels.length > 0 ? new Set(zone.labels) : null;
    const watched = seen.filter((o) => o.score >= zone.min_score && (!labels || labels.has(o.label)));
    const counts: Counts = {};
    let all = 0;
    for (const o of watched) {
      const inside =
        zone.coverage === undefined
          ? pointInPolygon(anchorPoint(o.px, zone.anchor), polygon, bounds)
          : cover.overlaps(o.px);
      if (!inside) continue;
      addCount(counts, o.label);
      all++;
    }
    addCount(counts, '*', all);
    if (zone.coverage === undefined) return { zone_id: zone.id, counts };
    const boxes = watched.map((o) => o.px);
    const fraction = boxes.length === 0 ? 0 : Math.min(1, cover.coveredArea(boxes) / cover.area);
    return {
      zone_id: zone.id,
      counts,
      coverage: { fraction, triggered: reachesCoverage(fraction, zone.coverage) },
    };
  });
}
