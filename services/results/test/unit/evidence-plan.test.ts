import type { RuleSet } from '@vision/shared';
import type { AnalyticsEvent } from '../../src/domain/analytics';
import { withEvidence } from '../../src/domain/evidence/decorate';
import { boxOf, eventDrawing, eventPicks, evidenceKeys } from '../../src/domain/evidence/plan';
import type { StoredFrame, StoredObject } from '../../src/domain/frames';

const obj = (t: string | undefined, s: number, b: [number, number, number, number]): StoredObject => ({
  l: 'car',
  s,
  b,
  ...(t !== undefined ? { t } : {}),
});
const frame = (seq: number, objects: StoredObject[]): StoredFrame => ({
  taskId: 't1',
  seq,
  frameId: `t1:${seq}`,
  frameTimeMs: seq * 200,
  width: 640,
  height: 360,
  objects,
});
const event = (over: Partial<AnalyticsEvent>): AnalyticsEvent => ({
  id: 'a'.repeat(32),
  kind: 'line.crossed',
  task_id: 't1',
  rule_id: 'gate',
  rule_version: 1,
  seq: 3,
  media_ms: 600,
  ...over,
});
const RULES = {
  zones: [
    {
      id: 'bay',
      polygon: [
        [0.1, 0.1],
        [0.5, 0.1],
        [0.5, 0.5],
      ],
    },
  ],
  lines: [{ id: 'gate', start: [0.5, 0], end: [0.5, 1] }],
} as unknown as RuleSet;

describe('the pictures of a step', () => {
  it('a box is [x1, y1, x2, y2] inside the frame', () => {
    expect(boxOf(obj('1', 0.9, [0.5, 0.5, 0.2, 0.4]))).toEqual([0.4, 0.3, 0.6, 0.7]);
    const b = boxOf(obj('1', 0.9, [0.05, 0.95, 0.2, 0.2]));
    [0, 0.85, 0.15, 1].forEach((v, i) => expect(b[i]).toBeCloseTo(v, 12));
  });

  it('an event shows its track box in its frame, else its zone, else the whole frame', () => {
    const f = frame(3, [obj('7', 0.8, [0.5, 0.5, 0.2, 0.2]), obj('7', 0.9, [0.1, 0.1, 0.1, 0.1])]);
    expect(eventDrawing(event({ track_id: '7' }), f, RULES)).toEqual({ box: [0.4, 0.4, 0.6, 0.6] });
    const lost = event({ kind: 'zone.exited', rule_id: 'bay', track_id: '8' });
    expect(eventDrawing(lost, f, RULES)).toEqual({
      polygon: [
        [0.1, 0.1],
        [0.5, 0.1],
        [0.5, 0.5],
      ],
    });
    expect(
      eventDrawing(event({ kind: 'zone.occupancy_exceeded', rule_id: 'bay' }), undefined, RULES),
    ).toEqual({
      polygon: [
        [0.1, 0.1],
        [0.5, 0.1],
        [0.5, 0.5],
      ],
    });
    expect(eventDrawing(event({ track_id: '9' }), f, RULES)).toEqual({ box: [0, 0, 1, 1] });
  });

  it('one picture per event id', () => {
    const f = frame(3, [obj('7', 0.8, [0.5, 0.5, 0.2, 0.2])]);
    const e = event({ track_id: '7' });
    const picks = eventPicks([e, e, event({ id: 'b'.repeat(32), seq: 4 })], new Map([[3, f]]), RULES);
    expect(picks.map((p) => [p.what, p.id, p.seq])).toEqual([
      ['event', e.id, 3],
      ['event', 'b'.repeat(32), 4],
    ]);
  });

  it('keys under the task, a track id as hex: `..` is a plain segment', () => {
    expect(evidenceKeys('t1', { what: 'event', id: 'a'.repeat(32), seq: 3 })).toEqual({
      full: `evidence/t1/events/${'a'.repeat(32)}.jpg`,
      crop: `evidence/t1/events/${'a'.repeat(32)}.crop.jpg`,
    });
    expect(evidenceKeys('t1', { what: 'track', id: '..', seq: 9 }).full).toBe(
      'evidence/t1/tracks/2e2e/9.jpg',
    );
  });

  it('an event says whether it has a picture: a path, or why not', () => {
    const e = event({});
    expect(withEvidence(e, null)).toEqual({
      ...e,
      has_snapshot: true,
      snapshot_path: `/v1/vision/tasks/t1/events/${e.id}/snapshot`,
    });
    expect(withEvidence(e, 'frame_gone')).toEqual({
      ...e,
      has_snapshot: false,
      snapshot_reason: 'frame_gone',
    });
    expect(withEvidence(e, undefined)).toEqual({
      ...e,
      has_snapshot: false,
      snapshot_reason: 'not_captured',
    });
  });
});
