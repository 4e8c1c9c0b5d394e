import { AnalyticsEngine } from '../../src/domain/analytics';
import { brief, eventsOf, footAt, frames, obj, rules, run, SQUARE } from './analytics-fixtures';

/**
 * A rule follows each track by its id, wherever the track sits in a frame's list of objects: the engine looks a
 * track up at its place in the previous frame first, and that shortcut must never hand one track another's state.
 */
const lineEngine = () =>
  AnalyticsEngine.create('t', rules({ lines: [{ id: 'l', start: [0.1, 0.5], end: [0.9, 0.5] }] }));

describe('analytics: tracks by id, whatever their order in the frame', () => {
  it('two tracks that swap places in the list keep their own sides of a line', () => {
    const a = (y: number) => obj('a', footAt(0.3, y));
    const b = (y: number) => obj('b', footAt(0.6, y));
    const out = run(
      lineEngine(),
      frames([
        [a(0.4), b(0.6)],
        [b(0.6), a(0.4)],
        [a(0.4), b(0.6)],
        [b(0.4), a(0.6)],
      ]),
    );
    expect(brief(eventsOf(out))).toEqual(['line.crossed@3/b/in', 'line.crossed@3/a/out']);
  });

  it('a track forgotten by a line starts afresh, even back at its old place in the list', () => {
    const a = (y: number) => obj('a', footAt(0.3, y));
    const c = obj('c', footAt(0.8, 0.2));
    // Missing from two frames (one empty, one shorter): its side is forgotten.
    const forgotten = run(lineEngine(), frames([[c, a(0.4)], [], [c], [c, a(0.6)]]));
    expect(eventsOf(forgotten)).toEqual([]);
    // Missing from one frame only: it keeps its side and the crossing counts.
    const kept = run(lineEngine(), frames([[a(0.4)], [], [a(0.6)]]));
    expect(brief(eventsOf(kept))).toEqual(['line.crossed@2/a/out']);
  });

  it("a zone's visits and marks follow their tracks when the list is reordered or shrinks", () => {
    const e = AnalyticsEngine.create(
      't',
      rules({ zones: [{ id: 'z', polygon: SQUARE, exit_ms: 0, lost_grace_ms: 100 }] }),
    );
    const inside = (t: string) => obj(t, footAt(0.5, 0.5));
    const outside = (t: string) => obj(t, footAt(0.9, 0.9));
    const out = run(
      e,
      frames([
        [inside('a'), outside('b')],
        [outside('b'), inside('a')],
        [outside('b')],
        [outside('b'), outside('c')],
        [inside('c'), outside('b')],
      ]),
    );
    expect(brief(eventsOf(out))).toEqual([
      'zone.entered@0/a',
      'zone.exited@3/a/lost/dwell=100',
      'zone.entered@4/c',
    ]);
    expect(out.map((f) => f.objects.map((o) => o.zones))).toEqual([
      [['z'], []],
      [[], ['z']],
      [[]],
      [[], []],
      [['z'], []],
    ]);
  });

  it("a zone's counts follow its tracks' order, also after an id switch moves a visit", () => {
    const e = AnalyticsEngine.create('t', rules({ zones: [{ id: 'z', polygon: SQUARE }] }));
    const person = (t: string) => obj(t, footAt(0.45, 0.5), 'person');
    const car = obj('c', footAt(0.55, 0.5), 'car');
    const out = run(e, frames([[person('p1'), car], [car], [car, person('p2')]]));
    // p2 takes p1's visit over (no event): the visit now follows the car's in the zone's order.
    expect(brief(eventsOf(out))).toEqual(['zone.entered@0/p1', 'zone.entered@0/c']);
    expect(out.map((f) => JSON.stringify(f.zones.z.counts))).toEqual([
      '{"person":1,"car":1,"*":2}',
      '{"person":1,"car":1,"*":2}',
      '{"car":1,"person":1,"*":2}',
    ]);
  });
});
