import type { LabeledDetection } from '../../src/detection-types';
import { ByteTracker, type TrackedDetection } from '../../src/tracking/byte-tracker';
import { correct, initiate, predict, stateToBox } from '../../src/tracking/kalman';
import { DEFAULT_TRACKER_OPTIONS } from '../../src/tracking/tracker-options';

const box = (x: number, y: number, w = 40, h = 80) => ({ x1: x, y1: y, x2: x + w, y2: y + h });
const person = (x: number, y: number, score = 0.9): LabeledDetection => ({
  label: 'person',
  score,
  box: box(x, y),
});
const ids = (out: TrackedDetection[]) => out.map((o) => o.trackId);

/** Seeded walkers with misses, crossings and labels, as plain detections per frame. */
function scene(frames: number): LabeledDetection[][] {
  let s = 7;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const walkers = Array.from({ length: 12 }, (_, i) => ({
    x: rnd() * 600,
    y: rnd() * 400,
    vx: (rnd() - 0.5) * 12,
    vy: (rnd() - 0.5) * 6,
    label: i % 3 ? 'person' : 'car',
  }));
  return Array.from({ length: frames }, () =>
    walkers.flatMap((w) => {
      w.x += w.vx;
      w.y += w.vy;
      return rnd() < 0.1 ? [] : [{ label: w.label, score: 0.3 + rnd() * 0.7, box: box(w.x, w.y) }];
    }),
  );
}

describe('Kalman filter of a box', () => {
  it('learns a constant velocity and keeps predicting with it through misses', () => {
    const noise = { measure: 0.05, position: 0.27, velocity: 1.03, initialVelocity: 1.9 };
    let s = initiate(box(0, 0), noise);
    for (let f = 1; f <= 30; f++) s = correct(predict(s, 0.1, noise, false), box(10 * f, 0), noise);
    expect(s.mean[4]).toBeCloseTo(100, 0); // 10 px per 0.1 s
    const ahead = stateToBox(predict(s, 0.5, noise, true));
    expect(ahead.x1).toBeCloseTo(350, -1);
    expect(ahead.y2 - ahead.y1).toBeCloseTo(80, 0);
    expect(predict(s, Number.NaN, noise, false).mean).toEqual(s.mean);
  });
});

describe('ByteTracker', () => {
  it('keeps an object seen in every frame under one id when frames are further apart than the buffer (1 and 2 fps)', () => {
    for (const fps of [1, 2]) {
      const t = new ByteTracker();
      const seen = new Set<string>();
      for (let f = 0; f < 12; f++)
        for (const id of ids(t.update([person(100 + 3 * f, 100)], (f * 1000) / fps))) seen.add(id);
      expect({ fps, ids: seen.size }).toEqual({ fps, ids: 1 });
    }
  });

  it('finds again, on buffered IoU, a track that moved further than its prediction (sparse frames)', () => {
    // Still for five frames at 5 fps, then a step of 34 px of its 40 px width: IoU 0.08 with the prediction, under
    // the first association's bound; both boxes widened by 0.3 of their size overlap by 0.31 (bound 0.3).
    const run = (bufferScale: number) => {
      const t = new ByteTracker({ bufferScale });
      const out: (string | undefined)[] = [];
      for (let f = 0; f < 5; f++) out.push(...ids(t.update([person(100, 100)], f * 200)));
      out.push(...ids(t.update([person(134, 100)], 5 * 200)));
      return out;
    };
    // Confirmed in its first frame (the tracker's first): an id in all six frames.
    const buffered = run(0.3);
    expect(buffered).toHaveLength(6);
    expect(new Set(buffered).size).toBe(1);
    // Without the buffer the stepped box is a new, tentative track: no id in that frame.
    expect(run(0)).toHaveLength(5);
  });

  it('labels every detection of a frame: an id once its track is confirmed, none before', () => {
    const t = new ByteTracker({ minHits: 3, confirmS: 0, confirmFirstFrame: false });
    const still = person(100, 100);
    const lone = [1, 2].map((f) => t.label([still], f * 200));
    expect(lone).toEqual([[{ ...still }], [{ ...still }]]); // in the frame, no id yet
    const third = t.label([still, person(400, 100, Number.NaN)], 600);
    expect(third).toEqual([{ ...still, trackId: expect.any(String) }]); // confirmed; the NaN score never comes out
    expect(t.update([still], 800)).toEqual([{ ...still, trackId: third[0].trackId }]);
  });

  it('keeps one id per moving object, separates labels and outputs a track once confirmed', () => {
    const t = new ByteTracker({ minHits: 2, confirmS: 0, confirmFirstFrame: false });
    const frames: string[][] = [];
    for (let f = 0; f < 20; f++) {
      const out = t.update(
        [person(10 + 5 * f, 100), person(300 - 5 * f, 100), { ...person(10 + 5 * f, 100), label: 'car' }],
        f * 100,
      );
      frames.push(ids(out));
    }
    expect(frames[0]).toEqual([]); // tentative on their first frame
    const [a, b, c] = frames[1];
    expect(new Set([a, b, c]).size).toBe(3);
    for (const row of frames.slice(1)) expect(row).toEqual([a, b, c]);
  });

  it('confirms a new track by default after 3 frames spanning 0.2 s, at 30 and at 5 fps', () => {
    const firstOut = (fps: number) => {
      const t = new ByteTracker();
      t.update([], -1000 / fps); // a frame before: the first frame's tracks are confirmed at once
      for (let i = 0; i < 20; i++) if (t.update([person(100, 100)], (i * 1000) / fps).length) return i;
      return -1;
    };
    expect(firstOut(30)).toBe(6); // 200 ms after the first detection
    expect(firstOut(5)).toBe(2); // the third frame
  });

  it('confirms the tracks of its first frame at once, and those of later frames after 3 frames', () => {
    const t = new ByteTracker();
    const first = ids(t.update([person(100, 100), person(400, 100)], 0));
    expect(first).toEqual(['1', '2']);
    // A person coming in later is tentative for 0.2 s.
    expect(ids(t.update([person(100, 100), person(400, 100), person(700, 100)], 40))).toEqual(['1', '2']);
  });

  it('keeps a lost track for the buffer in seconds, the same at 5 and at 30 fps', () => {
    for (const fps of [5, 30]) {
      const dt = 1000 / fps;
      const run = (gapS: number) => {
        const t = new ByteTracker({ minHits: 2, lostBufferS: 1, confirmS: 0 });
        let time = 0;
        let first = '';
        for (let i = 0; i < fps; i++, time += dt) first = ids(t.update([person(100, 100)], time))[0] ?? first;
        time += gapS * 1000;
        return { first, after: ids(t.update([person(100, 100)], time))[0] };
      };
      const short = run(0.8);
      expect(short.after).toBe(short.first);
      const long = run(1.5);
      expect(long.after).toBeUndefined(); // a new, tentative track
    }
  });

  it('drops a tentative track on its first miss and never reuses an id', () => {
    const t = new ByteTracker({ minHits: 2, confirmS: 0, confirmFirstFrame: false });
    t.update([person(0, 0)], 0);
    t.update([], 100);
    expect(t.update([person(0, 0)], 200)).toEqual([]); // tentative again
    const id = ids(t.update([person(0, 0)], 300))[0];
    expect(id).toBe('1');
    for (let i = 4; i < 30; i++) t.update([], i * 100);
    t.update([person(0, 0)], 3000);
    expect(ids(t.update([person(0, 0)], 3100))).toEqual(['2']);
  });

  it('predicts through misses: a moving object hidden for a few frames is found where it went', () => {
    const t = new ByteTracker({ minHits: 1, lostBufferS: 1, confirmS: 0 });
    const seen = new Set<string>();
    for (let f = 0; f < 8; f++) for (const id of ids(t.update([person(20 * f, 0)], f * 40))) seen.add(id);
    // Hidden three frames; 80 px on, nowhere near the last box seen (a 40 px wide box).
    for (const id of ids(t.update([person(20 * 11, 0)], 11 * 40))) seen.add(id);
    expect(seen.size).toBe(1);
  });

  it('uses low-score detections to continue tracks only and never outputs those under outputMinScore', () => {
    const t = new ByteTracker({
      highScore: 0.5,
      lowScore: 0.1,
      outputMinScore: 0.5,
      minHits: 1,
      confirmS: 0,
    });
    const id = ids(t.update([person(0, 0, 0.9)], 0))[0];
    expect(t.update([person(2, 0, 0.3)], 100)).toEqual([]); // kept by the track, not output
    expect(ids(t.update([person(4, 0, 0.9)], 200))).toEqual([id]);
    // Low: starts no confirmed track, however long it lasts (a tentative one, which only a detection of at least
    // newTrackScore confirms).
    for (let f = 3; f < 10; f++)
      expect(ids(t.update([person(4, 0, 0.9), person(400, 0, 0.3)], f * 100))).toEqual([id]);
  });

  it('counts a weak first detection in a new track: confirmed 3 frames after it once a detection of it is strong', () => {
    // At 5 fps a car coming in scores 0.34, then 0.57, 0.54, 0.78 (the parking-lot clip): its track is confirmed in
    // the third frame, as when every detection started a track.
    const t = new ByteTracker();
    t.update([], -200); // not the tracker's first frame
    const scores = [0.34, 0.57, 0.54, 0.78];
    const out = scores.map((s, f) => ids(t.update([person(100 - 10 * f, 100, s)], f * 200)));
    expect(out).toEqual([[], [], ['1'], ['1']]);
    // Weak all along: never confirmed.
    const weak = new ByteTracker();
    weak.update([], -200);
    for (let f = 0; f < 10; f++) expect(weak.update([person(100, 100, 0.45)], f * 200)).toEqual([]);
  });

  it('ignores detections with non-finite boxes or scores and survives a non-finite time', () => {
    const t = new ByteTracker({ minHits: 1, confirmS: 0 });
    const bad = { label: 'person', score: 0.9, box: { x1: Number.NaN, y1: 0, x2: 10, y2: 10 } };
    const out = t.update([bad, person(0, 0), { ...person(50, 0), score: Number.NaN }], 0);
    expect(out).toHaveLength(1);
    expect(ids(t.update([person(1, 0)], Number.NaN))).toEqual(ids(out));
    expect(JSON.stringify(t.snapshot())).not.toMatch(/null|NaN|Infinity/);
  });

  it('is deterministic and goes on identically after snapshot, JSON and restore', () => {
    const frames = scene(120);
    const opts = { minHits: 3, lostBufferS: 0.5, confirmS: 0.1 };
    const a = new ByteTracker(opts);
    const b = new ByteTracker(opts);
    const head = frames.slice(0, 60).map((d, i) => a.update(d, i * 33.4));
    expect(frames.slice(0, 60).map((d, i) => b.update(d, i * 33.4))).toEqual(head);
    const json = JSON.stringify(a.snapshot());
    const restored = ByteTracker.restore(JSON.parse(json), opts);
    const tailA = frames.slice(60).map((d, i) => a.update(d, (i + 60) * 33.4));
    const tailR = frames.slice(60).map((d, i) => restored.update(d, (i + 60) * 33.4));
    expect(tailR).toEqual(tailA);
    expect(new Set(tailA.flat().map((o) => o.trackId)).size).toBeGreaterThan(5);
    expect(() => ByteTracker.restore({ version: 2 } as never)).toThrow('not a tracker state');
  });

  it('keeps a walking person under one id across the gap of a handover, bridged: motion predicted, not aged', () => {
    // 2 fps, 10 px a frame; then no frame for 3 s more (the job moving between replicas) while the person walks on.
    const walk = (t: ByteTracker, from: number, frames: number, t0: number) =>
      Array.from({ length: frames }, (_, i) => ids(t.update([person(10 * (from + i), 100)], t0 + i * 500)));
    const before = new ByteTracker();
    expect(walk(before, 0, 8, 0).pop()).toEqual(['1']);
    const state = JSON.parse(JSON.stringify(before.snapshot()));
    const bridged = ByteTracker.restore(state);
    bridged.bridge(3000);
    expect(walk(bridged, 14, 3, 7 * 500 + 3500)).toEqual([['1'], ['1'], ['1']]);
    // Without the bridge the gap outlasts the buffer: the person comes back under a new id.
    const unbridged = ByteTracker.restore(state);
    expect(walk(unbridged, 14, 4, 7 * 500 + 3500).flat()).not.toContain('1');
  });
});

describe('the Kalman filter of a box at the frame side', () => {
  const noise = DEFAULT_TRACKER_OPTIONS.noise;
  /** A person coming in at the left side: the box the frame clips widens by 10 px a frame at 25 fps. */
  const widthAfter = (frameWidth?: number) => {
    let kf = initiate({ x1: 0, y1: 100, x2: 40, y2: 340 }, noise);
    let w = 40;
    for (let f = 1; f <= 8; f++) {
      w += 10;
      kf = predict(kf, 0.04, noise, false);
      kf = correct(kf, { x1: 0, y1: 100, x2: w, y2: 340 }, noise, frameWidth);
    }
    const b = stateToBox(kf);
    return { measured: w, filtered: b.x2 - b.x1 };
  };

  it('takes the width of a box at the side as measured, and lags it elsewhere', () => {
    const atSide = widthAfter(640);
    expect(Math.abs(atSide.filtered - atSide.measured)).toBeLessThan(3);
    const unknown = widthAfter(undefined);
    expect(unknown.filtered).toBeLessThan(unknown.measured - 20);
  });
});
