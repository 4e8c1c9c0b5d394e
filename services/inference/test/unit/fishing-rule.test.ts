import { fishingRule, personNearBoat } from '../../src/rules/fishing';

const det = (label: string, score: number, x1: number, y1: number, x2: number, y2: number) => ({
  label,
  score,
  box: { x1, y1, x2, y2 },
});

describe('fishing rule (person on or beside a boat)', () => {
  const boat = det('boat', 0.7, 100, 100, 300, 200);
  it('associates a person standing in the boat and one on the bank next to it, not one far away', () => {
    expect(personNearBoat({ x1: 150, y1: 50, x2: 180, y2: 150 }, boat.box)).toBe(true); // in the boat
    expect(personNearBoat({ x1: 310, y1: 120, x2: 340, y2: 210 }, boat.box)).toBe(true); // beside it
    expect(personNearBoat({ x1: 600, y1: 100, x2: 630, y2: 200 }, boat.box)).toBe(false);
    expect(personNearBoat({ x1: 150, y1: 0, x2: 180, y2: 40 }, boat.box)).toBe(false); // far above
  });

  it('yields one fishing box per boat with persons: union box, min(boat, best person) score', () => {
    const persons = [det('person', 0.9, 150, 50, 180, 150), det('person', 0.5, 200, 60, 230, 150)];
    const out = fishingRule(persons, [boat, det('boat', 0.8, 1000, 1000, 1100, 1100)]);
    expect(out).toEqual([{ label: 'fishing', score: 0.7, box: { x1: 100, y1: 50, x2: 300, y2: 200 } }]);
  });

  it('yields nothing without a boat or without a person', () => {
    expect(fishingRule([det('person', 0.9, 0, 0, 10, 10)], [])).toEqual([]);
    expect(fishingRule([], [boat])).toEqual([]);
  });
});
