import {
  bestShotRuleText,
  collectTracks,
  cropPath,
  noBestShotText,
  noSnapshotText,
  trackTimes,
  snapshotPath,
  type TrackedFrame,
  type TrackShot,
} from '../../src/evidence-model';

const frame = (
  ms: number,
  objects: { track_id?: string; label?: string; best_shot_path?: string }[],
): TrackedFrame => ({
  frame_time_ms: ms,
  objects: objects.map((o) => ({ label: o.label ?? 'person', ...o })),
});

describe("an event's picture paths", () => {
  it('reads the path the event names, or the documented one, and none without a snapshot', () => {
    const id = '0123456789abcdef0123456789abcdef';
    expect(snapshotPath('t 1', { id, has_snapshot: true })).toBe(
      `/v1/vision/tasks/t%201/events/${id}/snapshot`,
    );
    expect(snapshotPath('t', { id, has_snapshot: true, snapshot_path: '/x/snapshot' })).toBe('/x/snapshot');
    expect(snapshotPath('t', { id, has_snapshot: false, snapshot_reason: 'frame_gone' })).toBeUndefined();
    // An event stored before pictures were kept has no field at all: no picture.
    expect(snapshotPath('t', { id })).toBeUndefined();
  });

  it('asks for the crop with a query parameter', () => {
    expect(cropPath('/a/snapshot')).toBe('/a/snapshot?crop=true');
    expect(cropPath('/a/best_shot?v=2')).toBe('/a/best_shot?v=2&crop=true');
  });

  it('says why an event has no picture, in words', () => {
    expect(noSnapshotText('frame_gone')).toMatch(/left the buffer/);
    expect(noSnapshotText('capture_failed')).toMatch(/could not be taken/);
    expect(noSnapshotText('some_new_reason')).toBe('no picture: some new reason');
    expect(noSnapshotText(undefined)).toBe('no picture');
  });
});

describe('the tracks of the result frames', () => {
  it('lists each track with a best shot once, in the order first seen, and reads on from an index', () => {
    const frames = [
      frame(0, [{ track_id: '1', best_shot_path: '/b/1' }, { track_id: '2' }, { label: 'car' }]),
      frame(100, [{ track_id: '2', label: 'car', best_shot_path: '/b/2' }]),
      frame(200, [{ track_id: '1', best_shot_path: '/b/1?v=2' }]),
    ];
    const tracks = new Map<string, TrackShot>();
    collectTracks(frames.slice(0, 2), 0, tracks);
    expect([...tracks.values()]).toEqual([
      { trackId: '1', label: 'person', path: '/b/1', firstMs: 0, lastMs: 0 },
      // Seen first without a best shot: listed from the frame that names one.
      { trackId: '2', label: 'car', path: '/b/2', firstMs: 100, lastMs: 100 },
    ]);
    collectTracks(frames, 2, tracks);
    expect(tracks.get('1')).toEqual({
      trackId: '1',
      label: 'person',
      path: '/b/1?v=2',
      firstMs: 0,
      lastMs: 200,
    });
    expect(tracks.size).toBe(2);
  });

  it('a track’s tile says its times, a fallback picture, and why there is no picture', () => {
    const fmt = (ms: number) => `${ms / 1000}s`;
    expect(trackTimes({ firstMs: 1000, lastMs: 4200 }, fmt)).toBe('1s–4.2s');
    expect(trackTimes({ firstMs: 1000, lastMs: 1000 }, fmt)).toBe('1s');
    expect(bestShotRuleText('met')).toBeUndefined();
    expect(bestShotRuleText(undefined)).toBeUndefined();
    expect(bestShotRuleText('too_small')).toMatch(/small in every frame/);
    expect(bestShotRuleText('at_edge')).toMatch(/edge/);
    expect(bestShotRuleText('new_rule')).toBe('new rule');
    expect(noBestShotText('OP-TASK-NO-SNAPSHOT', 'frame_gone')).toBe(noSnapshotText('frame_gone'));
    expect(noBestShotText('OP-SYS-UNAVAILABLE', undefined)).toBe('no picture: it could not be read');
    expect(noBestShotText('UNREADABLE', undefined)).toBe('no picture: it could not be shown');
  });
});
