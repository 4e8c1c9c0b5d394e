/**
 * The places the end-to-end, SDK, CLI and console tests watch on the parking-lot clip: the lot's left lane (the
 * car in the clip drives up and to the left through it) and a line it crosses inwards, drawn upwards so that its
 * left side on the image (the "in" side) is to the left.
 */
import path from 'node:path';
import { parseRules, RULE_LIMITS } from '@vision/shared';
import { MEDIA } from './stack';

export const PARKING_LOT = path.join(MEDIA, 'videos', 'person_bicycle_car_parkinglot_intel.mp4');

export const LEFT_LANE = {
  id: 'lane',
  labels: ['car', 'truck'],
  polygon: [
    [0, 0.3],
    [0.3, 0.3],
    [0.3, 0.7],
    [0, 0.7],
  ] as [number, number][],
};

export const CURB = {
  id: 'curb',
  start: [0.2, 0.7] as [number, number],
  end: [0.2, 0.3] as [number, number],
  labels: ['car'],
};

/**
 * The costliest rule set the validator accepts: RULE_LIMITS.maxRules coverage zones (the zones whose step costs
 * most), each a polygon of RULE_LIMITS.maxVertices vertices watching every label, with long names, and labels
 * added until one more would pass RULE_LIMITS.maxBytes. `watch` is the labels each zone lists first (absent:
 * every label is watched).
 */
export function heaviestRules(watch: string[] = []): { zones: Record<string, unknown>[] } {
  const circle = (k: number): [number, number][] =>
    Array.from({ length: RULE_LIMITS.maxVertices }, (_, i) => {
      const a = (2 * Math.PI * i) / RULE_LIMITS.maxVertices;
      const r = 0.2 + 0.01 * k;
      return [0.5 + r * Math.cos(a), 0.5 + r * Math.sin(a)];
    });
  const zones = Array.from({ length: RULE_LIMITS.maxRules }, (_, k) => ({
    id: `cover-${k}`,
    name: `${k}`.padEnd(200, 'n'),
    coverage: 0.2,
    polygon: circle(k),
    ...(watch.length > 0 ? { labels: [...watch] } : {}),
  }));
  const size = (set: unknown) => {
    const parsed = parseRules(set);
    if (!parsed.ok) throw new Error(parsed.error.message);
    return Buffer.byteLength(JSON.stringify(parsed.rules));
  };
  if (watch.length === 0) return { zones };
  // Pad with labels no detector gives, zone by zone, while the set stays within the limit (a label adds its
  // JSON and a comma).
  let bytes = size({ zones });
  for (let n = 0; n < RULE_LIMITS.maxRules * (RULE_LIMITS.maxLabels - watch.length); n++) {
    const label = `pad-${n}-`.padEnd(200, 'l');
    const more = Buffer.byteLength(JSON.stringify(label)) + 1;
    if (bytes + more > RULE_LIMITS.maxBytes) break;
    zones[n % zones.length].labels?.push(label);
    bytes += more;
  }
  if (size({ zones }) !== bytes) throw new Error('heaviestRules: size estimate off');
  return { zones };
}
