/** The frames of a decoder run between ffmpeg and publishing (jobs/frame-queue.ts). */
import type { DetectedObject } from '@vision/shared';
import { FrameQueue, type FrameQueueOptions } from '../../src/jobs/frame-queue';
import type { SourceFrame } from '../../src/jobs/frame-source';

const frame = (n: number): SourceFrame => ({
  planes: Buffer.alloc(0),
  ptsMs: n,
  width: 4,
  height: 4,
  capturedAt: n,
});

/** A queue whose detections the test finishes by hand, in any order. */
function harness(o: Partial<FrameQueueOptions> = {}) {
  const detecting = new Map<number, { resolve: (v: DetectedObject[]) => void; reject: (e: Error) => void }>();
  const log: string[] = [];
  let maxAtOnce = 0;
  const q = new FrameQueue({
    live: false,
    liveQueue: 2,
    depth: 2,
    start: (f) => {
      const objects = new Promise<DetectedObject[]>((resolve, reject) =>
        detecting.set(f.ptsMs, { resolve, reject }),
      );
      maxAtOnce = Math.max(maxAtOnce, detecting.size);
      void objects.then(
        () => detecting.delete(f.ptsMs),
        () => detecting.delete(f.ptsMs),
      );
      log.push(`start ${f.ptsMs}`);
      return { f, timeMs: f.ptsMs, objects };
    },
    pause: () => log.push('pause'),
    resume: () => log.push('resume'),
    dropped: () => log.push('dropped'),
    ...o,
  });
  const finish = async (n: number) => {
    detecting.get(n)?.resolve([]);
    await new Promise((r) => setImmediate(r));
  };
  return { q, log, detecting, finish, maxAtOnce: () => maxAtOnce };
}

describe('frame queue', () => {
  it('keeps depth frames in detection and hands them out in decoding order, whatever order they finish in', async () => {
    const { q, log, detecting, finish, maxAtOnce } = harness();
    [0, 1, 2, 3].forEach((n) => q.push(frame(n)));
    expect([...detecting.keys()]).toEqual([0, 1]);
    expect(log).toContain('pause');
    await finish(1); // the second finishes first: the third starts, the first is still the next
    expect([...detecting.keys()]).toEqual([0, 2]);
    const first = q.next();
    await finish(0);
    expect((await first)?.f.ptsMs).toBe(0);
    q.done();
    expect((await q.next())?.f.ptsMs).toBe(1);
    q.done();
    q.end();
    await finish(2);
    expect((await q.next())?.f.ptsMs).toBe(2);
    q.done();
    await finish(3);
    expect((await q.next())?.f.ptsMs).toBe(3);
    q.done();
    expect(await q.next()).toBeUndefined();
    expect(maxAtOnce()).toBe(2);
    expect(log.filter((l) => l.startsWith('start'))).toEqual(['start 0', 'start 1', 'start 2', 'start 3']);
  });

  it('starts one frame at a time at depth 1 (a detector with state)', async () => {
    const { q, detecting, finish } = harness({ depth: 1 });
    [0, 1, 2].forEach((n) => q.push(frame(n)));
    expect([...detecting.keys()]).toEqual([0]);
    await finish(0);
    // Detected but not yet published: the next frame is detected meanwhile, one at a time.
    expect([...detecting.keys()]).toEqual([1]);
    await finish(1);
    expect(detecting.size).toBe(0);
    q.done();
    expect([...detecting.keys()]).toEqual([2]);
  });

  it('a live source keeps the freshest frames while detection is behind', () => {
    const { q, log, detecting } = harness({ live: true, depth: 1, liveQueue: 2 });
    [0, 1, 2, 3, 4].forEach((n) => q.push(frame(n)));
    expect([...detecting.keys()]).toEqual([0]);
    expect(log.filter((l) => l === 'dropped')).toHaveLength(2);
    expect(log).not.toContain('pause');
  });

  it('after close, nothing more starts and next() answers undefined; a failed detection is its frame only', async () => {
    const { q, detecting } = harness();
    [0, 1, 2].forEach((n) => q.push(frame(n)));
    const first = await q.next();
    q.close();
    detecting.get(0)?.reject(new Error('model failed'));
    await expect(first?.objects).rejects.toThrow('model failed');
    q.done();
    expect([...detecting.keys()]).toEqual([1]);
    expect(await q.next()).toBeUndefined();
  });
});
