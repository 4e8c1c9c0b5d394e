import { countImageZones, imageDistance } from '@vision/shared';
import { AnalyticsEngine, type EngineSnapshot } from '../../src/domain/analytics';
import { brief, eventsOf, footAt, frames, obj, rules, run, SQUARE } from './analytics-fixtures';

// Every rule is decided on the frame's pixels (docs/ANALYTICS.md, "On the image").
const LANDSCAPE = { width: 480, height: 360 };
const PORTRAIT = { width: 360, height: 480 };

// A diagonal, and feet from (0.6, 0.7) to (0.6, 0.35): on a 480 x 360 image the second point lies in the
// segment's strip (its projection falls between the perpendiculars at the ends); in normalized units it does not.
const DIAGONAL = rules({ lines: [{ id: 'd', start: [0.5, 0.5], end: [0.9, 0.9] }] });
const walk = [[obj('1', footAt(0.6, 0.7))], [obj('1', footAt(0.6, 0.35))]];

describe('lines on the image', () => {
  it('takes the strip from the frame pixels: the crossing near the end counts on a landscape frame', () => {
    const e = AnalyticsEngine.create('t', DIAGONAL);
    expect(brief(eventsOf(run(e, frames(walk, 100, 0, LANDSCAPE))))).toEqual(['line.crossed@1/1/in']);
    expect(e.analytics().rules[0]).toMatchObject({ in_total: 1, out_total: 0 });
  });

  it('follows each frame size: on a portrait frame the same normalized walk leaves the strip', () => {
    const e = AnalyticsEngine.create('t', DIAGONAL);
    expect(eventsOf(run(e, frames(walk, 100, 0, PORTRAIT)))).toEqual([]);
    // The size may change within a task: each frame is decided on its own pixels.
    const mixed = [...frames(walk, 100, 0, PORTRAIT), ...frames(walk, 100, 2, LANDSCAPE)];
    expect(brief(eventsOf(run(AnalyticsEngine.create('t', DIAGONAL), mixed)))).toEqual([
      'line.crossed@3/1/in',
    ]);
  });

  it('the normalized geometry, kept for evaluations stored before, decides as on a 1 x 1 frame', () => {
    const e = AnalyticsEngine.create('t', DIAGONAL, 1, 'normalized');
    expect(eventsOf(run(e, frames(walk, 100, 0, LANDSCAPE)))).toEqual([]);
    expect(e.snapshot().geometry).toBe('normalized');
  });
});

describe('the geometry in snapshots', () => {
  it('a snapshot names its geometry, and a snapshot without one (stored before) restores as normalized', () => {
    const e = AnalyticsEngine.create('t', DIAGONAL);
    run(e, frames(walk.slice(0, 1), 100, 0, LANDSCAPE));
    const snap = JSON.parse(JSON.stringify(e.snapshot())) as EngineSnapshot;
    expect(snap.geometry).toBe('pixels');
    const resumed = AnalyticsEngine.restore(snap, DIAGONAL);
    expect(brief(eventsOf(run(resumed, frames(walk.slice(1), 100, 1, LANDSCAPE))))).toEqual([
      'line.crossed@1/1/in',
    ]);
    const { geometry: _geometry, ...before } = snap;
    const legacy = AnalyticsEngine.restore(before, DIAGONAL);
    expect(legacy.geometry).toBe('normalized');
    expect(eventsOf(run(legacy, frames(walk.slice(1), 100, 1, LANDSCAPE)))).toEqual([]);
    expect(() => AnalyticsEngine.restore({ ...snap, geometry: 'other' as 'pixels' }, DIAGONAL)).toThrow(
      /geometry/,
    );
  });
});

describe('zones on the image', () => {
  it('measures the switch distance on the image, in units of its longer side', () => {
    // 400 x 100: 0.05 of the longer side is 20 pixels, 0.05 of the width but 0.2 of the height.
    const wide = { width: 400, height: 100 };
    expect(imageDistance(0.5, 0.5, 0.5, 0.6, wide)).toBeCloseTo(0.025, 15);
    expect(imageDistance(0.5, 0.5, 0.56, 0.5, wide)).toBeCloseTo(0.06, 15);
    const zone = rules({
      zones: [
        {
          id: 'z',
          polygon: [
            [0.1, 0.1],
            [0.9, 0.1],
            [0.9, 0.9],
            [0.1, 0.9],
          ],
        },
      ],
    });
    const switched = (to: [number, number]) => {
      const e = AnalyticsEngine.create('t', zone);
      const input = frames([[obj('1', footAt(0.5, 0.5))], [obj('2', footAt(...to))]], 100, 0, wide);
      return brief(eventsOf(run(e, input)));
    };
    // 10 pixels down (0.1 of the height): 0.025 on the image, within 0.05: the new id takes the visit over.
    expect(switched([0.5, 0.6])).toEqual(['zone.entered@0/1']);
    // 24 pixels across (0.06 of the width): 0.06 on the image, beyond: a new visit.
    expect(switched([0.56, 0.5])).toEqual(['zone.entered@0/1', 'zone.entered@1/2']);
  });

  it('a frame without pixels has no watched objects', () => {
    const e = AnalyticsEngine.create('t', rules({ zones: [{ id: 'z', polygon: SQUARE }] }));
    const out = run(e, frames([[obj('1', footAt(0.5, 0.5))]], 100, 0, { width: 0, height: 360 }));
    expect(out[0]).toMatchObject({ events: [], objects: [{ zones: [] }] });
  });

  it('an image counts its zones on its pixels; an image without pixels counts nothing', () => {
    const r = rules({
      zones: [
        { id: 'a', polygon: SQUARE },
        { id: 'fire', polygon: SQUARE, coverage: 0.5, labels: ['fire'] },
      ],
    });
    const objects = [obj(undefined, footAt(0.5, 0.5)), obj(undefined, [0.3, 0.3, 0.5, 0.7], 'fire')];
    const out = countImageZones(r.zones, objects, { width: 640, height: 360 });
    expect(out[0].counts).toEqual({ person: 1, '*': 1 });
    // Area fractions do not depend on the image's shape: half of the zone is covered.
    expect(out[1].coverage?.fraction).toBeCloseTo(0.5, 12);
    expect(countImageZones(r.zones, objects, { width: 640, height: 0 })).toEqual([
      { zone_id: 'a', counts: { '*': 0 } },
      { zone_id: 'fire', counts: { '*': 0 }, coverage: { fraction: 0, triggered: false } },
    ]);
  });
});
