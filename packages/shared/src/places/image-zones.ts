import { addCount, type Counts } from './counts';
import { PolygonCover, reachesCoverage } from './coverage';
import { anchorPoint, pointInPolygon, polygonBounds, type Box } from './geometry';
import type { ZoneRule } from './rules';

/**
 * Zones over one image's detections (no tracks, no time): per zone, the watched objects counted in it by label
 * (`*`: all). An anchor zone counts an object whose anchor lies in the polygon (edges included); a coverage zone
 * counts an object whose box overlaps the polygon with positive area, and also reports the covered fraction and
 * whether it reaches the zone's `coverage` threshold. Hysteresis, dwell and occupancy alerts need time and do not
 * apply.
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
): ImageZoneCounts[] {
  return zones.map((zone) => {
    const bounds = polygonBounds(zone.polygon);
    const cover = new PolygonCover(zone.polygon);
    const labels = zone.labels && zone.labels.length > 0 ? new Set(zone.labels) : null;
    const watched = objects.filter((o) => o.score >= zone.min_score && (!labels || labels.has(o.label)));
    const counts: Counts = {};
    let all = 0;
    for (const o of watched) {
      const inside =
        zone.coverage === undefined
          ? pointInPolygon(anchorPoint(o.box, zone.anchor), zone.polygon, bounds)
          : cover.overlaps(o.box);
      if (!inside) continue;
      addCount(counts, o.label);
      all++;
    }
    addCount(counts, '*', all);
    if (zone.coverage === undefined) return { zone_id: zone.id, counts };
    const fraction = Math.min(1, cover.coveredArea(watched.map((o) => o.box)) / cover.area);
    return {
      zone_id: zone.id,
      counts,
      coverage: { fraction, triggered: reachesCoverage(fraction, zone.coverage) },
    };
  });
}
