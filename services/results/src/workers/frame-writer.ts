import type { Clock } from '@vision/shared';
import type { StoredFrame } from '../domain/frames';
import type { FramesStore } from '../store/frames-store';
import type { TasksStore } from '../store/tasks-store';

interface Waiter {
  frames: StoredFrame[];
  /** Resolved with the tasks of the write that have zones or lines. */
  resolve: (withRules: ReadonlySet<string>) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for ingest: the batch handlers of all partitions that run at the same time hand their
 * frames here, and they are written together in one multi-row INSERT while the previous write is in
 * flight. Each handler resolves only when its own frames are committed (so the bus commits its offsets
 * only then) and rejects when that write fails (so the bus delivers the batch again). Per-partition
 * order holds: a partition's next batch is handed over only after its previous one resolved.
 *
 * With `lingerMs`, frames that find no write in flight wait that long for others to join them: live
 * streams deliver a frame or two per batch, and a statement costs about 1 ms on PGlite however few its
 * rows (1.05 ms per frame written alone, 0.18 ms in eights), so many slow streams would otherwise spend
 * more on statements than on frames.
 */
export class FrameWriter {
  private pending: Waiter[] = [];
  private pendingFrames = 0;
  private flushing = false;
  private linger?: NodeJS.Timeout;
  private readonly lingerMs: number;
  private readonly maxFramesPerWrite: number;

  constructor(
    private readonly frames: FramesStore,
    private readonly tasks: TasksStore,
    private readonly clock: Clock,
    opts: {
      /** How long the first frames of a write wait for more to join (RESULTS_INGEST_LINGER_MS); 0: the next turn. */
      lingerMs?: number;
      /** Frames beyond which a write starts without waiting for more to join. */
      maxFramesPerWrite?: number;
    } = {},
  ) {
    this.lingerMs = opts.lingerMs ?? 0;
    this.maxFramesPerWrite = opts.maxFramesPerWrite ?? 8_000;
  }

  /** Stores `frames`; resolves, once they are committed, with the tasks of the write that have zones or lines. */
  write(frames: StoredFrame[]): Promise<ReadonlySet<string>> {
    if (frames.length === 0) return Promise.resolve(new Set());
    return new Promise<ReadonlySet<string>>((resolve, reject) => {
      this.pending.push({ frames, resolve, reject });
      this.pendingFrames += frames.length;
      if (this.linger && this.pendingFrames >= this.maxFramesPerWrite) {
        clearTimeout(this.linger);
        this.linger = undefined;
        void this.drain();
      } else if (!this.flushing) {
        this.flushing = true;
        if (this.lingerMs > 0) {
          this.linger = setTimeout(() => {
            this.linger = undefined;
            void this.drain();
          }, this.lingerMs);
        } else {
          // Let handlers started in the same tick join the first write.
          setImmediate(() => void this.drain());
        }
      }
    });
  }

  private take(): Waiter[] {
    let n = 0;
    let i = 0;
    while (
      i < this.pending.length &&
      (i === 0 || n + this.pending[i].frames.length <= this.maxFramesPerWrite)
    ) {
      n += this.pending[i].frames.length;
      i++;
    }
    this.pendingFrames -= n;
    return this.pending.splice(0, i);
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.take();
      const all = group.flatMap((w) => w.frames);
      try {
        await this.frames.insert(all);
        const withRules = new Set(
          await this.tasks.noteFrames([...new Set(all.map((f) => f.taskId))], this.clock.now()),
        );
        for (const w of group) w.resolve(withRules);
      } catch (err) {
        for (const w of group) w.reject(err);
      }
    }
    this.flushing = false;
  }
}
