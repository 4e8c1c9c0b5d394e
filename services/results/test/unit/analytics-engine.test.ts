import { countImageZones } from '@vision/shared';
import {
  AnalyticsEngine,
  analyticsFrameOf,
  type AnalyticsFrame,
  type EngineSnapshot,
} from '../../src/domain/analytics';
import { addDwell, dwellPercentile, emptyDwellStats } from '../../src/domain/analytics/dwell-stats';
import { brief, eventsOf, footAt, frames, obj, rules, run, SQUARE, SQUARE_FRAME } from './analytics-fixtures';

/** mulberry32: a small seeded PRNG, so the scenario is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const RULES = rules({
  zones: [
    {
      id: 'door',
      polygon: SQUARE,
      enter_ms: 200,
      exit_ms: 300,
      dwell_limit_ms: 1500,
      lost_grace_ms: 400,
      occupancy: [{ label: '*', over: 0, hysteresis_ms: 200 }],
    },
    {
      id: 'left',
      polygon: [
        [0, 0],
        [0.5, 0],
        [0.5, 1],
        [0, 1],
      ],
      anchor: 'center',
      labels: ['car'],
    },
    {
      id: 'smoke',
      polygon: [
        [0.1, 0.1],
        [0.9, 0.1],
        [0.5, 0.9],
      ],
      coverage: 0.2,
      enter_ms: 100,
      exit_ms: 100,
      labels: ['smoke'],
    },
  ],
  lines: [{ id: 'gate', start: [0.2, 0.5], end: [0.8, 0.45], hysteresis_ms: 100 }],
});

/** 300 frames of 12 wandering tracks (some vanish for a while) and a smoke box. */
function scenario(seed: number): AnalyticsFrame[] {
  const rnd = prng(seed);
  const tracks = Array.from({ length: 12 }, (_, i) => ({
    id: `t${i}`,
    label: i % 3 === 0 ? 'car' : 'person',
    x: rnd(),
    y: rnd(),
    gone: 0,
  }));
  const out: AnalyticsFrame[] = [];
  for (let seq = 0; seq < 300; seq++) {
    const objects = [];
    for (const t of tracks) {
      t.x = Math.min(0.95, Math.max(0.05, t.x + (rnd() - 0.5) * 0.06));
      t.y = Math.min(0.95, Math.max(0.15, t.y + (rnd() - 0.5) * 0.06));
      if (t.gone > 0) t.gone--;
      else if (rnd() < 0.02) t.gone = Math.floor(rnd() * 8);
      else objects.push(obj(t.id, footAt(t.x, t.y), t.label, 0.5 + rnd() / 2));
    }
    const s = 0.1 + 0.3 * Math.abs(Math.sin(seq / 20));
    objects.push(obj(undefined, [0.5 - s, 0.3, 0.5 + s, 0.3 + s], 'smoke', 0.8));
    out.push({ seq, time_ms: seq * 40, width: 640, height: 480, objects });
  }
  return out;
}

describe('AnalyticsEngine', () => {
  it('is deterministic: two runs give byte-identical outputs, events and ids', () => {
    const input = scenario(7);
    const a = run(AnalyticsEngine.create('task-1', RULES), input);
    const b = run(AnalyticsEngine.create('task-1', RULES), input);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    const events = eventsOf(a);
    expect(new Set(events.map((e) => e.kind))).toEqual(
      new Set([
        'zone.entered',
        'zone.exited',
        'zone.dwell_exceeded',
        'zone.occupancy_exceeded',
        'zone.occupancy_cleared',
        'line.crossed',
      ]),
    );
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    for (const e of events) expect(e.id).toMatch(/^[0-9a-f]{32}$/);
    // Another task's events get other ids.
    const other = eventsOf(run(AnalyticsEngine.create('task-2', RULES), input));
    expect(other.map((e) => e.id)).not.toEqual(events.map((e) => e.id));
  });

  it('snapshot -> JSON -> restore with the rules -> continue equals an uninterrupted run', () => {
    const input = scenario(11);
    const whole = AnalyticsEngine.create('task-1', RULES);
    const expected = run(whole, input);
    for (const cut of [1, 57, 150, 299]) {
      const first = AnalyticsEngine.create('task-1', RULES);
      const before = run(first, input.slice(0, cut));
      const snap = JSON.parse(JSON.stringify(first.snapshot())) as EngineSnapshot;
      // The snapshot refers to its rules by version; it never carries them.
      expect(Object.keys(snap)).not.toContain('rules');
      expect(JSON.stringify(snap)).not.toContain('"polygon"');
      const resumed = AnalyticsEngine.restore(snap, first.rules);
      const after = run(resumed, input.slice(cut));
      expect(JSON.stringify([...before, ...after])).toBe(JSON.stringify(expected));
      expect(resumed.analytics()).toEqual(whole.analytics());
      expect(JSON.stringify(resumed.snapshot())).toBe(JSON.stringify(whole.snapshot()));
    }
  });

  it('numbers rule versions as the task store does: create at any version, replace only above it', () => {
    const z = rules({ zones: [{ id: 'z', polygon: SQUARE }] });
    const e = AnalyticsEngine.create('t', z, 3);
    expect(e.rulesVersion).toBe(3);
    expect(
      brief(
        e.processFrame({ seq: 0, time_ms: 0, ...SQUARE_FRAME, objects: [obj('1', footAt(0.5, 0.5))] }).events,
      ),
    ).toEqual(['zone.entered@0/1']);
    expect(() => e.replaceRules(z, 3)).toThrow(/not above/);
    const moved = {
      zones: [{ ...z.zones[0], polygon: SQUARE.map(([x, y]) => [x, y - 0.1] as [number, number]) }],
    };
    expect(e.replaceRules(rules(moved), 7).map((ev) => [ev.kind, ev.rule_version, ev.reason])).toEqual([
      ['zone.exited', 3, 'rule_changed'],
    ]);
    expect(e.rulesVersion).toBe(7);
    expect(e.analytics().rules[0].version).toBe(7);
  });

  it('skips a frame whose seq is not above the last one, and never runs media time backwards', () => {
    const e = AnalyticsEngine.create('t', rules({ zones: [{ id: 'z', polygon: SQUARE, enter_ms: 200 }] }));
    const a = e.processFrame({
      seq: 5,
      time_ms: 1000,
      ...SQUARE_FRAME,
      objects: [obj('1', footAt(0.5, 0.5))],
    });
    expect(
      e.processFrame({ seq: 5, time_ms: 1000, ...SQUARE_FRAME, objects: [obj('1', footAt(0.5, 0.5))] })
        .skipped,
    ).toBe(true);
    expect(
      e.processFrame({ seq: 6, time_ms: 900, ...SQUARE_FRAME, objects: [obj('1', footAt(0.5, 0.5))] })
        .media_ms,
    ).toBe(1000);
    const c = e.processFrame({
      seq: 7,
      time_ms: 1200,
      ...SQUARE_FRAME,
      objects: [obj('1', footAt(0.5, 0.5))],
    });
    expect(a.skipped).toBe(false);
    expect(brief(c.events)).toEqual(['zone.entered@7/1']);
    expect(e.analytics().as_of_seq).toBe(7);
  });

  describe('replaceRules', () => {
    const base = { id: 'z', polygon: SQUARE, occupancy: [{ label: 'person', over: 0 }] };
    const inside = frames([[obj('1', footAt(0.5, 0.5))], [obj('1', footAt(0.5, 0.5))]]);

    it('keeps the state of an unchanged rule (a new name is not a change) and its version', () => {
      const e = AnalyticsEngine.create(
        't',
        rules({ zones: [base], lines: [{ id: 'l', start: [0, 0.3], end: [1, 0.3] }] }),
      );
      run(e, inside);
      expect(
        e.replaceRules(
          rules({ zones: [{ ...base, name: 'Door' }], lines: [{ id: 'l', start: [0, 0.3], end: [1, 0.3] }] }),
        ),
      ).toEqual([]);
      expect(e.rulesVersion).toBe(2);
      const later = run(e, frames([[obj('1', footAt(0.2, 0.5))]], 100, 2));
      expect(brief(eventsOf(later))).toEqual([
        'zone.exited@2/1/exited/dwell=100',
        'zone.occupancy_cleared@2',
      ]);
      expect(eventsOf(later)[0].rule_version).toBe(1);
      expect(e.analytics().rules[0]).toMatchObject({
        name: 'Door',
        version: 1,
        visits: { total: 1, open: 0 },
      });
    });

    it('a changed zone ends its open visits and alerts mid-visit (reason rule_changed); the new one starts fresh', () => {
      const e = AnalyticsEngine.create('t', rules({ zones: [base] }));
      run(e, inside);
      const ended = e.replaceRules(rules({ zones: [{ ...base, enter_ms: 100 }] }));
      expect(brief(ended)).toEqual([
        'zone.exited@1/1/rule_changed/dwell=100',
        'zone.occupancy_cleared@1/rule_changed',
      ]);
      expect(ended.every((ev) => ev.rule_version === 1)).toBe(true);
      const later = run(e, frames([[obj('1', footAt(0.5, 0.5))], [obj('1', footAt(0.5, 0.5))]], 100, 2));
      // Under the new version the track must be inside for 100 ms again.
      expect(brief(eventsOf(later))).toEqual(['zone.entered@3/1', 'zone.occupancy_exceeded@3']);
      expect(eventsOf(later)[0].rule_version).toBe(2);
      expect(e.analytics().rules[0]).toMatchObject({ version: 2, visits: { total: 1, open: 1 } });
    });

    it('a changed line emits nothing and counts afresh; an unchanged one keeps its counts and side', () => {
      const a = { id: 'a', start: [0.2, 0.5] as [number, number], end: [0.8, 0.5] as [number, number] };
      const b = { id: 'b', start: [0.2, 0.55] as [number, number], end: [0.8, 0.55] as [number, number] };
      const e = AnalyticsEngine.create('t', rules({ lines: [a, b] }));
      run(e, frames([[obj('1', footAt(0.5, 0.7))], [obj('1', footAt(0.5, 0.3))]]));
      expect(e.replaceRules(rules({ lines: [a, { ...b, hysteresis_ms: 100 }] }))).toEqual([]);
      const later = run(e, frames([[obj('1', footAt(0.5, 0.7))]], 100, 2));
      // a remembers the side (above): back below is "out"; the changed b starts without a side.
      expect(brief(eventsOf(later))).toEqual(['line.crossed@2/1/out']);
      expect(e.analytics().rules).toEqual([
        expect.objectContaining({ id: 'a', version: 1, in_total: 1, out_total: 1 }),
        expect.objectContaining({ id: 'b', version: 2, in_total: 0, out_total: 0 }),
      ]);
    });

    it('a removed zone ends its visits (reason rule_removed); a new rule starts at the new version', () => {
      const e = AnalyticsEngine.create('t', rules({ zones: [base] }));
      run(e, inside);
      const ended = e.replaceRules(rules({ lines: [{ id: 'l2', start: [0, 0.3], end: [1, 0.3] }] }));
      expect(brief(ended)).toEqual([
        'zone.exited@1/1/rule_removed/dwell=100',
        'zone.occupancy_cleared@1/rule_removed',
      ]);
      expect(e.analytics().rules).toEqual([expect.objectContaining({ id: 'l2', version: 2 })]);
    });
  });

  it('summarizes dwell p50/p95/max and per-label counts', () => {
    const e = AnalyticsEngine.create('t', rules({ zones: [{ id: 'z', polygon: SQUARE }] }));
    // Five visits of dwell 0, 100, 200, 300, 400 ms by separate tracks.
    const seq: ReturnType<typeof obj>[][] = [];
    for (let v = 0; v < 5; v++) {
      for (let k = 0; k <= v; k++) seq.push([obj(`v${v}`, footAt(0.5, 0.5))]);
      seq.push([obj(`v${v}`, footAt(0.1, 0.5))]);
    }
    run(e, frames(seq));
    const zone = e.analytics().rules[0];
    expect(zone).toMatchObject({
      entered: { person: 5 },
      exited: { person: 5 },
      dwell_ms: { count: 5, max: 400 },
    });
    if (zone.kind !== 'zone') throw new Error('a zone');
    // Percentiles are bucketed: within 1/64 above the exact value, never above the maximum.
    expect(zone.dwell_ms.p50).toBeGreaterThanOrEqual(200);
    expect(zone.dwell_ms.p50).toBeLessThanOrEqual(200 * (1 + 1 / 64));
    expect(zone.dwell_ms.p95).toBe(400);
  });

  it('keeps dwell percentiles within 1/64 of the exact nearest-rank value', () => {
    const rnd = prng(3);
    const stats = emptyDwellStats();
    const values: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const v = Math.floor(rnd() ** 3 * 3_600_000);
      values.push(v);
      addDwell(stats, v);
    }
    values.sort((a, b) => a - b);
    for (const p of [1, 50, 90, 95, 99, 100]) {
      const exact = values[Math.ceil((p / 100) * values.length) - 1];
      const got = dwellPercentile(stats, p) as number;
      expect(got).toBeGreaterThanOrEqual(exact);
      expect(got).toBeLessThanOrEqual(Math.max(exact + 1, exact * (1 + 1 / 64)));
    }
  });
});

describe('countImageZones and stored frames', () => {
  it('counts one image by anchor or by coverage', () => {
    const r = rules({
      zones: [
        { id: 'a', polygon: SQUARE, labels: ['person'] },
        { id: 'fire', polygon: SQUARE, coverage: 0.5, labels: ['fire'] },
      ],
    });
    const out = countImageZones(
      r.zones,
      [
        obj(undefined, footAt(0.5, 0.5)),
        obj(undefined, footAt(0.45, 0.45)),
        obj(undefined, footAt(0.1, 0.5)),
        obj(undefined, [0.3, 0.3, 0.5, 0.7], 'fire'),
      ],
      SQUARE_FRAME,
    );
    expect(out[0]).toEqual({ zone_id: 'a', counts: { person: 2, '*': 2 } });
    expect(out[1].counts).toEqual({ fire: 1, '*': 1 });
    expect(out[1].coverage?.fraction).toBeCloseTo(0.5, 12);
    expect(out[1].coverage?.triggered).toBe(true);
  });

  it('reads a stored frame (cx, cy, w, h) as x1, y1, x2, y2', () => {
    const f = analyticsFrameOf({
      taskId: 't',
      seq: 3,
      frameId: 'f',
      frameTimeMs: 120,
      width: 640,
      height: 480,
      objects: [
        { l: 'person', s: 0.8, b: [0.5, 0.5, 0.2, 0.4], t: '7' },
        { l: 'car', s: 0.6, b: [0.95, 0.5, 0.2, 0.2] },
      ],
    });
    expect(f.seq).toBe(3);
    expect(f.time_ms).toBe(120);
    expect([f.width, f.height]).toEqual([640, 480]);
    expect(f.objects[0]).toEqual({ label: 'person', score: 0.8, box: [0.4, 0.3, 0.6, 0.7], track_id: '7' });
    expect(f.objects[1].box).toEqual([0.85, 0.4, 1, 0.6]);
  });
});
