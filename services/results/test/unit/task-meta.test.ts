import {
  appliedThreshold,
  isEndOfData,
  isEndOfEvents,
  isExpired,
  type TaskMeta,
} from '../../src/domain/task-meta';
import { toPublicFrame, toStoredFrame } from '../../src/domain/frames';
import { parseFramesTopicMessage, parseTaskEvent } from '../../src/domain/messages';

const meta: TaskMeta = {
  taskId: 't1',
  subject: 's1',
  kind: 'video',
  status: 'running',
  businessThreshold: 0.8,
  lowerBound: 0.3,
  resultExpiresAt: new Date('2026-04-01T00:00:00Z'),
  statusAt: new Date('2026-01-01T00:00:00Z'),
};
const now = new Date('2026-01-01T00:10:00Z');

describe('thresholds', () => {
  it('applies the business threshold without min_score and clamps min_score to the lower bound', () => {
    expect(appliedThreshold(meta)).toBe(0.8);
    expect(appliedThreshold(meta, 0.5)).toBe(0.5);
    expect(appliedThreshold(meta, 0.1)).toBe(0.3);
    expect(appliedThreshold(meta, 0)).toBe(0.3);
    expect(appliedThreshold(meta, 1)).toBe(1);
  });

  it('expires at result_expires_at', () => {
    expect(isExpired(meta, new Date('2026-03-31T23:59:59Z'))).toBe(false);
    expect(isExpired(meta, new Date('2026-04-01T00:00:00Z'))).toBe(true);
  });
});

describe('isEndOfData', () => {
  const base = { meta, now, endGraceMs: 60_000 };
  it('ends only when the end marker is known and its last frame was returned', () => {
    expect(
      isEndOfData({ ...base, end: { frames: 10, status: 'succeeded' }, lastSeq: 9, hasMore: false }),
    ).toBe(true);
    expect(
      isEndOfData({ ...base, end: { frames: 10, status: 'succeeded' }, lastSeq: 8, hasMore: false }),
    ).toBe(false);
    expect(
      isEndOfData({ ...base, end: { frames: 10, status: 'succeeded' }, lastSeq: 9, hasMore: true }),
    ).toBe(false);
    expect(isEndOfData({ ...base, end: { frames: 0, status: 'failed' }, lastSeq: -1, hasMore: false })).toBe(
      true,
    );
  });

  it('never ends a running task', () => {
    expect(isEndOfData({ ...base, lastSeq: 100, hasMore: false })).toBe(false);
  });

  it('ends a terminal task without end marker only after the grace period', () => {
    const stopped = { ...meta, status: 'stopped', statusAt: new Date(now.getTime() - 30_000) };
    expect(isEndOfData({ ...base, meta: stopped, lastSeq: 5, hasMore: false })).toBe(false);
    const later = { ...stopped, statusAt: new Date(now.getTime() - 60_000) };
    expect(isEndOfData({ ...base, meta: later, lastSeq: 5, hasMore: false })).toBe(true);
    expect(isEndOfData({ ...base, meta: later, lastSeq: 5, hasMore: true })).toBe(false);
  });

  it('ends refunded and image tasks at once', () => {
    expect(isEndOfData({ ...base, meta: { ...meta, status: 'refunded' }, lastSeq: -1, hasMore: false })).toBe(
      true,
    );
    expect(isEndOfData({ ...base, meta: { ...meta, kind: 'image' }, lastSeq: -1, hasMore: false })).toBe(
      true,
    );
  });
});

describe('isEndOfEvents', () => {
  const base = {
    now,
    endGraceMs: 60_000,
    end: { frames: 10, status: 'succeeded' },
    lastSeq: 9,
    hasMore: false,
  };
  it('waits for the task to end, although its frames are complete: its rules may still change until then', () => {
    expect(isEndOfData({ ...base, meta })).toBe(true);
    expect(isEndOfEvents({ ...base, meta })).toBe(false);
    expect(isEndOfEvents({ ...base, meta: { ...meta, status: 'stopping' } })).toBe(false);
    for (const status of ['succeeded', 'failed', 'stopped'])
      expect(isEndOfEvents({ ...base, meta: { ...meta, status } })).toBe(true);
    expect(isEndOfEvents({ ...base, meta: { ...meta, status: 'succeeded' }, lastSeq: 8 })).toBe(false);
  });
});

describe('frames', () => {
  const msg = {
    schema: 1,
    type: 'frame',
    event_id: 't1:0',
    task_id: 't1',
    seq: 0,
    frame_id: 'f0',
    frame_time_ms: 1_767_225_600_123,
    image: { width: 640, height: 480 },
    lower_bound: 0.3,
    objects: [
      {
        label: 'person',
        score: 0.9,
        bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.5, width: 0.1, height: 0.2 },
        track_id: '7',
      },
      {
        label: 'car',
        score: 0.4,
        bbox: { format: 'cxcywh_normalized', cx: 0.1, cy: 0.2, width: 0.3, height: 0.4 },
        track_id: 8,
      },
      {
        label: 'car',
        score: 0.2,
        bbox: { format: 'cxcywh_normalized', cx: 0.1, cy: 0.2, width: 0.3, height: 0.4 },
      },
    ],
  };

  it('stores detections at or above the lower bound and filters at read time', () => {
    const parsed = parseFramesTopicMessage(msg);
    if (parsed.kind !== 'frame') throw new Error('expected a frame');
    const stored = toStoredFrame(parsed.frame);
    expect(stored.objects).toHaveLength(2);
    expect(toPublicFrame(stored, 0.8, false)).toEqual({
      frame_id: 'f0',
      frame_time_ms: 1_767_225_600_123,
      image: { width: 640, height: 480 },
      objects: [
        {
          label: 'person',
          score: 0.9,
          bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.5, width: 0.1, height: 0.2 },
          track_id: '7',
        },
      ],
    });
    const low = toPublicFrame(stored, 0.3, true);
    expect(low.objects.map((o) => o.track_id)).toEqual(['7', '8']);
    expect(low.objects_total).toBe(2);
    const none = toPublicFrame(stored, 1, true);
    expect(none.objects).toEqual([]);
    expect(none.objects_total).toBe(2);
  });

  it('classifies invalid messages instead of throwing', () => {
    expect(parseFramesTopicMessage({ ...msg, seq: -1 }).kind).toBe('invalid');
    // Past the seq column's range: skipped, not a batch whose insert fails at every delivery.
    expect(parseFramesTopicMessage({ ...msg, seq: 2 ** 31 - 1 }).kind).toBe('frame');
    expect(parseFramesTopicMessage({ ...msg, seq: 2 ** 31 }).kind).toBe('invalid');
    expect(parseFramesTopicMessage({ ...msg, seq: 8_980_499_428 }).kind).toBe('invalid');
    expect(parseFramesTopicMessage({ type: 'other' }).kind).toBe('invalid');
    expect(parseFramesTopicMessage(null).kind).toBe('invalid');
    expect(
      parseFramesTopicMessage({ schema: 1, type: 'end', task_id: 't1', frames: 3, status: 'succeeded' }).kind,
    ).toBe('end');
    expect(parseTaskEvent({ schema: 1, task_id: 't1' }).ok).toBe(false);
  });
});
