import { ANCHORS, type Anchor } from '@vision/shared';
import { AnalyticsEngine } from '../../src/domain/analytics';
import { brief, eventsOf, footAt, frames, obj, rules, run, SQUARE } from './analytics-fixtures';

const IN = footAt(0.5, 0.5);
const OUT = footAt(0.2, 0.5);
const EDGE_IN = footAt(0.41, 0.5);
const EDGE_OUT = footAt(0.39, 0.5);

const zoneEngine = (extra: Record<string, unknown> = {}) =>
  AnalyticsEngine.create('task-1', rules({ zones: [{ id: 'z', polygon: SQUARE, ...extra }] }));

describe('zones: enter and exit hysteresis', () => {
  it('flicker at an edge shorter than enter_ms / exit_ms gives no event', () => {
    const e = zoneEngine({ enter_ms: 300, exit_ms: 300 });
    // In and out every 100 ms: never inside for 300 ms in a row.
    const flicker = Array.from({ length: 12 }, (_, i) => [obj('1', i % 2 ? EDGE_IN : EDGE_OUT)]);
    expect(eventsOf(run(e, frames(flicker)))).toEqual([]);
    expect(e.analytics().rules[0]).toMatchObject({ occupancy: { '*': 0 }, visits: { total: 0, open: 0 } });
  });

  it('enters after enter_ms inside, exits after exit_ms outside; dwell from the first inside frame', () => {
    const e = zoneEngine({ enter_ms: 200, exit_ms: 200 });
    const seq = [OUT, IN, IN, IN, IN, OUT, IN, OUT, OUT, OUT].map((b) => [obj('1', b)]);
    const out = run(e, frames(seq));
    // Inside from seq 1 (100 ms): entered at seq 3 (300 ms). Outside at seq 5, back in at 6 (run reset),
    // out from seq 7 (700 ms) to seq 9 (900 ms): exits at seq 9; last inside 600 ms, dwell 600 - 100.
    expect(brief(eventsOf(out))).toEqual(['zone.entered@3/1', 'zone.exited@9/1/exited/dwell=500']);
    expect(out[4].objects[0].zones).toEqual(['z']);
    expect(out[2].objects[0].zones).toEqual([]);
    expect(out[4].zones.z.counts).toEqual({ person: 1, '*': 1 });
  });

  it('with 0 ms hysteresis, one frame inside is a visit of dwell 0', () => {
    const e = zoneEngine();
    const out = run(e, frames([[obj('1', OUT)], [obj('1', IN)], [obj('1', OUT)]]));
    expect(brief(eventsOf(out))).toEqual(['zone.entered@1/1', 'zone.exited@2/1/exited/dwell=0']);
  });
});

describe('zones: anchors', () => {
  // One box; around each of its nine anchor points a small zone. A rule with anchor A counts the object in
  // the zone around A's point and in no other.
  const box: [number, number, number, number] = [0.3, 0.2, 0.7, 0.8];
  const points: Record<Anchor, [number, number]> = {
    top_left: [0.3, 0.2],
    top_center: [0.5, 0.2],
    top_right: [0.7, 0.2],
    center_left: [0.3, 0.5],
    center: [0.5, 0.5],
    center_right: [0.7, 0.5],
    bottom_left: [0.3, 0.8],
    bottom_center: [0.5, 0.8],
    bottom_right: [0.7, 0.8],
  };
  const around = ([x, y]: [number, number]): [number, number][] => [
    [x - 0.02, y - 0.02],
    [x + 0.02, y - 0.02],
    [x + 0.02, y + 0.02],
    [x - 0.02, y + 0.02],
  ];
  it.each(ANCHORS)('%s decides membership', (anchor) => {
    const zones = Object.entries(points).map(([name, p]) => ({ id: name, polygon: around(p), anchor }));
    const e = AnalyticsEngine.create('t', rules({ zones }));
    const [out] = run(e, frames([[obj('1', box)]]));
    expect(out.objects[0].zones).toEqual([anchor]);
  });

  it('bottom_center is the default', () => {
    const e = AnalyticsEngine.create(
      't',
      rules({ zones: [{ id: 'z', polygon: around(points.bottom_center) }] }),
    );
    expect(run(e, frames([[obj('1', box)]]))[0].objects[0].zones).toEqual(['z']);
  });
});

describe('zones: lost tracks and id switches', () => {
  it('a track lost and found within lost_grace_ms keeps its visit and dwell', () => {
    const e = zoneEngine({ lost_grace_ms: 500 });
    // Inside at 0-200 ms, missing 300-600 ms (400 ms <= 500), back inside 700-800 ms, then out.
    const seq = [
      [obj('1', IN)],
      [obj('1', IN)],
      [obj('1', IN)],
      [],
      [],
      [],
      [],
      [obj('1', IN)],
      [obj('1', IN)],
      [obj('1', OUT)],
    ];
    expect(brief(eventsOf(run(e, frames(seq))))).toEqual([
      'zone.entered@0/1',
      'zone.exited@9/1/exited/dwell=800',
    ]);
  });

  it('a track missing longer than lost_grace_ms ends its visit (reason lost) and a return is a new visit', () => {
    const e = zoneEngine({ lost_grace_ms: 250 });
    const seq = [[obj('1', IN)], [obj('1', IN)], [], [], [], [obj('1', IN)]];
    // Last seen at 100 ms; at 400 ms it has been missing 300 ms > 250.
    expect(brief(eventsOf(run(e, frames(seq))))).toEqual([
      'zone.entered@0/1',
      'zone.exited@4/1/lost/dwell=100',
      'zone.entered@5/1',
    ]);
  });

  it('an id switch: a new id appearing near the lost one, same label, within the grace, takes its visit over', () => {
    const e = zoneEngine({ lost_grace_ms: 500, switch_distance: 0.05 });
    const near = footAt(0.52, 0.5);
    const seq = [[obj('1', IN)], [obj('1', IN)], [], [obj('2', near)], [obj('2', near)], [obj('2', OUT)]];
    const out = run(e, frames(seq));
    // One visit, entered by track 1, ended by track 2, dwell 0 -> 400 ms.
    expect(brief(eventsOf(out))).toEqual(['zone.entered@0/1', 'zone.exited@5/2/exited/dwell=400']);
    expect(eventsOf(out)[1].visit_id).toBe(eventsOf(out)[0].visit_id);
    expect(out[3].zones.z.counts['*']).toBe(1);
    expect(out[3].objects[0].zones).toEqual(['z']);
  });

  it('no id switch when the new id is too far, has another label, or comes after the grace', () => {
    const far = footAt(0.58, 0.5);
    const cases = [
      { extra: { lost_grace_ms: 500 }, next: obj('2', far) },
      { extra: { lost_grace_ms: 500 }, next: obj('2', IN, 'car') },
      { extra: { lost_grace_ms: 150 }, next: obj('2', IN), gap: 2 },
    ];
    for (const c of cases) {
      const e = zoneEngine(c.extra);
      const gaps = Array.from({ length: c.gap ?? 1 }, () => []);
      const out = run(e, frames([[obj('1', IN)], ...gaps, [c.next]]));
      const kinds = eventsOf(out).map((ev) => `${ev.kind}/${ev.track_id}`);
      expect(kinds).toContain('zone.entered/2');
    }
  });
});

describe('zones: dwell and occupancy', () => {
  it('emits zone.dwell_exceeded once per visit when the dwell reaches dwell_limit_ms', () => {
    const e = zoneEngine({ dwell_limit_ms: 300 });
    const out = run(e, frames(Array.from({ length: 8 }, () => [obj('1', IN)])));
    expect(brief(eventsOf(out))).toEqual(['zone.entered@0/1', 'zone.dwell_exceeded@3/1/dwell=300']);
  });

  it('raises and clears occupancy alerts with their own hysteresis', () => {
    const e = zoneEngine({
      lost_grace_ms: 0,
      occupancy: [{ label: 'person', over: 1, under: 1, hysteresis_ms: 200 }],
    });
    const people = (n: number) =>
      Array.from({ length: n }, (_, i) => obj(String(i), footAt(0.45 + i * 0.03, 0.5)));
    // Over 1 for 200 ms: raised at seq 5 (a 1 at seq 2 restarts the run); under 1 for 200 ms: cleared at seq 12
    // (the 1 at seq 7 is not under 1, the 2 at seq 9 restarts the run). lost_grace_ms 0: a missing track leaves.
    const counts = [0, 2, 1, 2, 2, 2, 2, 1, 0, 2, 0, 0, 0, 0];
    const seq = counts.map((n, i) => (n === 0 && i > 0 ? [obj('9', OUT)] : people(n)));
    const out = run(e, frames(seq, 100));
    const occ = eventsOf(out).filter((ev) => ev.kind.startsWith('zone.occupancy'));
    expect(occ.map((ev) => `${ev.kind}@${ev.seq}:${ev.count}`)).toEqual([
      'zone.occupancy_exceeded@5:2',
      'zone.occupancy_cleared@12:0',
    ]);
    expect(e.analytics().rules[0]).toMatchObject({ occupancy_alerts: { person: false } });
  });
});

describe('zones: coverage trigger', () => {
  it('activates when the union of boxes covers the fraction of the zone, counting overlaps once', () => {
    const e = zoneEngine({ coverage: 0.5, labels: ['fire'], enter_ms: 100, exit_ms: 0 });
    // Two overlapping boxes over the square [0.4, 0.6]^2: union covers x 0.4-0.55 over the full height = 75 %.
    const a = obj(undefined, [0.4, 0.3, 0.5, 0.7], 'fire');
    const b = obj(undefined, [0.45, 0.4, 0.55, 0.6], 'fire');
    const small = obj(undefined, [0.4, 0.4, 0.45, 0.6], 'fire'); // 25 %
    const person = obj('p', [0.3, 0.3, 0.7, 0.7], 'person'); // not watched
    const out = run(e, frames([[a, b, person], [a, b], [small], [a]]));
    expect(out[0].zones.z.coverage).toBeCloseTo(0.75, 12);
    expect(out[2].zones.z.coverage).toBeCloseTo(0.25, 12);
    expect(out[0].zones.z.counts).toEqual({ fire: 2, '*': 2 });
    expect(brief(eventsOf(out))).toEqual(['zone.entered@1', 'zone.exited@2/exited/dwell=100']);
    expect(out[0].objects.map((o) => o.zones)).toEqual([['z'], ['z'], []]);
  });
});
