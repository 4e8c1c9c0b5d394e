import { AnalyticsEngine } from '../../src/domain/analytics';
import { brief, eventsOf, footAt, frames, obj, rules, run } from './analytics-fixtures';

// A horizontal segment from x 0.3 to 0.7 at y 0.5, drawn left to right: its left side on the image is above it.
const lineEngine = (extra: Record<string, unknown> = {}) =>
  AnalyticsEngine.create(
    'task-1',
    rules({ lines: [{ id: 'l', start: [0.3, 0.5], end: [0.7, 0.5], ...extra }] }),
  );

const walk = (ys: number[], x = 0.5, track = '1') =>
  ys.map((y) => (Number.isNaN(y) ? [] : [obj(track, footAt(x, y))]));

describe('lines: crossings of the segment', () => {
  it('moving up across a left-to-right line is "in", moving down is "out"', () => {
    const e = lineEngine();
    const out = run(e, frames(walk([0.7, 0.6, 0.4, 0.3, 0.6])));
    expect(brief(eventsOf(out))).toEqual(['line.crossed@2/1/in', 'line.crossed@4/1/out']);
    expect(e.analytics().rules[0]).toMatchObject({
      in: { person: 1 },
      out: { person: 1 },
      in_total: 1,
      out_total: 1,
    });
  });

  it('reversing the line reverses the direction', () => {
    const e = AnalyticsEngine.create(
      't',
      rules({ lines: [{ id: 'l', start: [0.7, 0.5], end: [0.3, 0.5] }] }),
    );
    expect(brief(eventsOf(run(e, frames(walk([0.7, 0.3])))))).toEqual(['line.crossed@1/1/out']);
  });

  it('an object crossing the infinite line outside the segment is not counted', () => {
    const e = lineEngine();
    // x = 0.8: beyond the end; the band ends at x = 0.7.
    expect(eventsOf(run(e, frames(walk([0.7, 0.3, 0.7], 0.8))))).toEqual([]);
    // Seen in the band below, then above but out of the band, then back below in the band: no crossing.
    const mixed = [[obj('2', footAt(0.5, 0.7))], [obj('2', footAt(0.9, 0.3))], [obj('2', footAt(0.5, 0.7))]];
    expect(eventsOf(run(e, frames(mixed, 100, 3)))).toEqual([]);
  });

  it('an anchor exactly on the line counts on the "out" side', () => {
    const e = lineEngine();
    // above (in side) -> on the line: out; on the line -> below: same side, nothing; below -> above: in.
    const out = run(e, frames(walk([0.3, 0.5, 0.6, 0.4])));
    expect(brief(eventsOf(out))).toEqual(['line.crossed@1/1/out', 'line.crossed@3/1/in']);
  });

  it('a track missing from two consecutive frames forgets its side; one missing frame does not', () => {
    const e = lineEngine();
    expect(brief(eventsOf(run(e, frames(walk([0.7, NaN, 0.3])))))).toEqual(['line.crossed@2/1/in']);
    const e2 = lineEngine();
    expect(eventsOf(run(e2, frames(walk([0.7, NaN, NaN, 0.3]))))).toEqual([]);
  });

  it('back and forth: every change of side counts', () => {
    const e = lineEngine();
    const out = run(e, frames(walk([0.6, 0.4, 0.6, 0.4, 0.6])));
    expect(brief(eventsOf(out)).map((s) => s.split('/')[2])).toEqual(['in', 'out', 'in', 'out']);
  });

  it('hysteresis_ms: the new side must hold that long; a shorter excursion is not a crossing', () => {
    const e = lineEngine({ hysteresis_ms: 200 });
    const out = run(e, frames(walk([0.6, 0.4, 0.6, 0.4, 0.4, 0.4, 0.6])));
    // Above at seq 1 only (back below at 2), then above from seq 3 (300 ms) to seq 5 (500 ms): in at 5.
    expect(brief(eventsOf(out))).toEqual(['line.crossed@5/1/in']);
  });

  it('watches only its labels and scores', () => {
    const e = lineEngine({ labels: ['car'], min_score: 0.5 });
    const seq = [
      [obj('1', footAt(0.5, 0.6), 'car', 0.9), obj('2', footAt(0.5, 0.6), 'person')],
      [obj('1', footAt(0.5, 0.4), 'car', 0.9), obj('2', footAt(0.5, 0.4), 'person')],
    ];
    expect(brief(eventsOf(run(e, frames(seq))))).toEqual(['line.crossed@1/1/in']);
    const low = lineEngine({ min_score: 0.5 });
    expect(
      eventsOf(
        run(
          low,
          frames([[obj('1', footAt(0.5, 0.6), 'car', 0.4)], [obj('1', footAt(0.5, 0.4), 'car', 0.4)]]),
        ),
      ),
    ).toEqual([]);
  });
});
