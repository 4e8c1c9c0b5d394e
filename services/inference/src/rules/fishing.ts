import { area, intersection } from '../model/nms';
import { unionBox } from '../bbox';
import type { LabeledDetection, PixelBox } from '../detection-types';

/**
 * The "person on or beside a boat" fishing rule (docs/MODELS.md, "Fishing rule"). Pure.
 *
 * A person is associated with a boat when
 *   - at least `minOverlap` (default 10%) of the person's box lies inside the boat's box, or
 *   - the person's foot point (bottom centre) lies inside the boat's box grown by `footMargin`
 *     (default 25%) of the boat's width/height on each side (standing on the deck or on the bank next to it).
 * Every boat with at least one associated person yields one `fishing` detection whose box is the
 * union of the boat and its persons and whose score is min(boat score, best person score): the rule
 * is as confident as its weakest part. Persons and boats alone yield nothing in this scene.
 */
export interface FishingRuleOptions {
  minOverlap?: number;
  footMargin?: number;
}

export function personNearBoat(person: PixelBox, boat: PixelBox, opts: FishingRuleOptions = {}): boolean {
  const minOverlap = opts.minOverlap ?? 0.1;
  const margin = opts.footMargin ?? 0.25;
  const pa = area(person);
  if (pa > 0 && intersection(person, boat) / pa >= minOverlap) return true;
  const fx = (person.x1 + person.x2) / 2;
  const fy = person.y2;
  const mw = (boat.x2 - boat.x1) * margin;
  const mh = (boat.y2 - boat.y1) * margin;
  return fx >= boat.x1 - mw && fx <= boat.x2 + mw && fy >= boat.y1 - mh && fy <= boat.y2 + mh;
}

export function fishingRule(
  persons: readonly LabeledDetection[],
  boats: readonly LabeledDetection[],
  opts: FishingRuleOptions = {},
): LabeledDetection[] {
  const out: LabeledDetection[] = [];
  for (const boat of boats) {
    const near = persons.filter((p) => personNearBoat(p.box, boat.box, opts));
    if (near.length === 0) continue;
    let box = boat.box;
    let best = 0;
    for (const p of near) {
      box = unionBox(box, p.box);
      best = Math.max(best, p.score);
    }
    out.push({ label: 'fishing', score: Math.min(boat.score, best), box });
  }
  return out.sort((a, b) => b.score - a.score);
}
