/** FrameWriter's group commit: frames handed over close together go out in one write. */
import type { StoredFrame } from '../../src/domain/frames';
import type { FramesStore } from '../../src/store/frames-store';
import type { TasksStore } from '../../src/store/tasks-store';
import { FrameWriter } from '../../src/workers/frame-writer';

const frame = (taskId: string, seq: number): StoredFrame => ({
  taskId,
  seq,
  frameId: `${taskId}-${seq}`,
  frameTimeMs: 1_700_000_000_000 + seq,
  width: 640,
  height: 480,
  objects: [],
});

function writerWith(opts: ConstructorParameters<typeof FrameWriter>[3]) {
  const writes: number[][] = [];
  const frames = {
    insert: async (fs: StoredFrame[]) => {
      writes.push(fs.map((f) => f.seq));
    },
  } as unknown as FramesStore;
  const tasks = { noteFrames: async () => undefined } as unknown as TasksStore;
  const writer = new FrameWriter(frames, tasks, { now: () => new Date(0) }, opts);
  return { writer, writes };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('FrameWriter', () => {
  it('without a linger, frames handed over in separate turns are written separately', async () => {
    const { writer, writes } = writerWith({});
    const a = writer.write([frame('a', 0)]);
    await sleep(5);
    const b = writer.write([frame('b', 1)]);
    await Promise.all([a, b]);
    expect(writes).toEqual([[0], [1]]);
  });

  it('with a linger, frames handed over within it share one write, and each caller resolves', async () => {
    const { writer, writes } = writerWith({ lingerMs: 60 });
    const done = [writer.write([frame('a', 0)])];
    await sleep(5);
    done.push(writer.write([frame('b', 1), frame('b', 2)]));
    await sleep(5);
    done.push(writer.write([frame('c', 3)]));
    await Promise.all(done);
    expect(writes).toEqual([[0, 1, 2, 3]]);
  });

  it('a linger ends at once when the frames waiting reach the write size', async () => {
    const { writer, writes } = writerWith({ lingerMs: 10_000, maxFramesPerWrite: 3 });
    const started = Date.now();
    await Promise.all([writer.write([frame('a', 0), frame('a', 1)]), writer.write([frame('b', 2)])]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(writes).toEqual([[0, 1, 2]]);
  });

  it('a failed write rejects its callers only, and the next write goes through', async () => {
    let fail = true;
    const writes: number[][] = [];
    const frames = {
      insert: async (fs: StoredFrame[]) => {
        if (fail) {
          fail = false;
          throw new Error('database down');
        }
        writes.push(fs.map((f) => f.seq));
      },
    } as unknown as FramesStore;
    const tasks = { noteFrames: async () => undefined } as unknown as TasksStore;
    const writer = new FrameWriter(frames, tasks, { now: () => new Date(0) }, { lingerMs: 5 });
    await expect(writer.write([frame('a', 0)])).rejects.toThrow('database down');
    await writer.write([frame('a', 0)]);
    expect(writes).toEqual([[0]]);
  });
});
