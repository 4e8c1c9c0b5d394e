import { countsText, freshId, normalizedAt, pointsAttr, timelinePercent } from '../../src/places-model';

describe('console zones and lines helpers', () => {
  it('maps a pointer to normalized picture coordinates, clamped to [0, 1] and rounded to 4 decimals', () => {
    const box = { left: 100, top: 50, width: 400, height: 200 };
    expect(normalizedAt(300, 150, box)).toEqual([0.5, 0.5]);
    expect(normalizedAt(100, 50, box)).toEqual([0, 0]);
    expect(normalizedAt(50, 300, box)).toEqual([0, 1]);
    expect(normalizedAt(100 + 400 / 3, 50, box)).toEqual([0.3333, 0]);
  });

  it('makes ids unused by any zone or line', () => {
    const rules = {
      zones: [{ id: 'zone-1', polygon: [] }],
      lines: [{ id: 'zone-2', start: [0, 0] as [number, number], end: [1, 1] as [number, number] }],
    };
    expect(freshId(rules, 'zone')).toBe('zone-3');
    expect(freshId(rules, 'line')).toBe('line-1');
  });

  it('writes polygon points, timeline positions and counts', () => {
    expect(
      pointsAttr([
        [0, 0.5],
        [1, 0.25],
      ]),
    ).toBe('0,0.5 1,0.25');
    expect(timelinePercent(1500, 3000)).toBe(50);
    expect(timelinePercent(4000, 3000)).toBe(100);
    expect(timelinePercent(10, 0)).toBe(0);
    expect(countsText({ truck: 1, '*': 3, car: 2 })).toBe('all 3, car 2, truck 1');
    expect(countsText({})).toBe('-');
  });
});
