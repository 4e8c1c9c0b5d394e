/**
 * The result frames of one task, paged in with the results endpoint's cursors and kept up to date
 * while the task runs. Changing `min_score` re-reads from the first page at the new threshold (the
 * read-time filter of SPEC.md 4.4; nothing is rerun).
 */
import { api, type Frame } from './api.js';

const PAGE = 500;
const POLL_MS = 1500;
/** A live task's history is capped (the oldest frames are dropped). */
const MAX_FRAMES = 20_000;

export class FrameFeed {
  frames: Frame[] = [];
  times: number[] = [];
  /** True once the last page of an ended task was read. */
  ended = false;
  /** The threshold the service applied (X-Min-Score-Applied). */
  applied?: number;
  private cursor = '';
  private minScore?: number;
  private generation = 0;
  private timer?: ReturnType<typeof setTimeout>;
  private stopped = false;

  constructor(
    private readonly taskId: string,
    private readonly onChange: (feed: FrameFeed) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    void this.pump(this.generation);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Re-reads every frame at `minScore` (undefined: the task's own threshold). */
  setMinScore(minScore: number | undefined): void {
    this.minScore = minScore;
    this.generation++;
    clearTimeout(this.timer);
    this.frames = [];
    this.times = [];
    this.cursor = '';
    this.ended = false;
    this.onChange(this);
    void this.pump(this.generation);
  }

  private async pump(gen: number): Promise<void> {
    try {
      for (;;) {
        const q = new URLSearchParams({ limit: String(PAGE) });
        if (this.cursor) q.set('cursor', this.cursor);
        if (this.minScore !== undefined) q.set('min_score', this.minScore.toFixed(2));
        const r = await api<{ items: Frame[]; next_cursor: string }>(
          'GET',
          `/v1/vision/tasks/${encodeURIComponent(this.taskId)}/results?${q}`,
        );
        if (gen !== this.generation || this.stopped) return;
        const applied = Number(r.headers.get('x-min-score-applied'));
        if (Number.isFinite(applied) && r.headers.has('x-min-score-applied')) this.applied = applied;
        for (const f of r.body.items) {
          this.frames.push(f);
          this.times.push(f.frame_time_ms);
        }
        if (this.frames.length > MAX_FRAMES) {
          this.frames.splice(0, this.frames.length - MAX_FRAMES);
          this.times.splice(0, this.times.length - MAX_FRAMES);
        }
        if (r.body.next_cursor === '') this.ended = true;
        else this.cursor = r.body.next_cursor;
        this.onChange(this);
        if (this.ended) return;
        if (r.body.items.length < PAGE) break;
      }
      this.timer = setTimeout(() => void this.pump(gen), POLL_MS);
    } catch (err) {
      if (gen !== this.generation || this.stopped) return;
      this.onError(err);
      this.timer = setTimeout(() => void this.pump(gen), POLL_MS * 4);
    }
  }
}
