/**
 * The result frames of one task. While the task runs they come over the results stream
 * (`GET /v1/vision/tasks/{id}/results/stream`, Server-Sent Events): each event's id is the cursor after
 * its frame, so a stream that closes early (its maximum duration, a dropped connection) is reopened with
 * `Last-Event-ID` and resumes with the next frame, none missed or repeated. A task that had already ended
 * is read with the page endpoint's cursors. Changing `min_score` re-reads from the first frame at the new
 * threshold (the read-time filter of SPEC.md 4.4; nothing is rerun).
 */
import { api, openEventStream, type Frame } from './api.js';
import { parseEventStream } from './sse.js';

const PAGE = 500;
const POLL_MS = 1500;
/** Wait before reopening a stream the server closed (no error). */
const RECONNECT_MS = 1000;
/** Wait before trying again after an error (shown meanwhile). */
const RETRY_MS = 6000;
/** A live task's history is capped (the oldest frames are dropped). */
const MAX_FRAMES = 20_000;

export class FrameFeed {
  frames: Frame[] = [];
  times: number[] = [];
  /** True once every frame of an ended task was read (the stream's `end`, or the last page). */
  ended = false;
  /** The threshold the service applied (X-Min-Score-Applied). */
  applied?: number;
  /** Whether the task may still add frames (then they are followed over the stream). */
  private live = true;
  private cursor = '';
  private lastEventId?: string;
  private minScore?: number;
  private generation = 0;
  private timer?: ReturnType<typeof setTimeout>;
  private redraw?: ReturnType<typeof setTimeout>;
  private reading?: AbortController;
  private stopped = false;

  constructor(
    private readonly taskId: string,
    private readonly onChange: (feed: FrameFeed) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** `live`: the task had not ended when its page opened. */
  start(live: boolean): void {
    this.live = live;
    this.read(this.generation);
  }

  stop(): void {
    this.stopped = true;
    this.cancel();
  }

  /** Re-reads every frame at `minScore` (undefined: the task's own threshold). */
  setMinScore(minScore: number | undefined): void {
    this.minScore = minScore;
    this.generation++;
    this.cancel();
    this.frames = [];
    this.times = [];
    this.cursor = '';
    this.lastEventId = undefined;
    this.ended = false;
    this.onChange(this);
    this.read(this.generation);
  }

  private cancel(): void {
    clearTimeout(this.timer);
    clearTimeout(this.redraw);
    this.redraw = undefined;
    this.reading?.abort();
    this.reading = undefined;
  }

  private current(gen: number): boolean {
    return gen === this.generation && !this.stopped;
  }

  private read(gen: number): void {
    void (this.live ? this.follow(gen) : this.page(gen));
  }

  private add(items: readonly Frame[]): void {
    for (const f of items) {
      this.frames.push(f);
      this.times.push(f.frame_time_ms);
    }
    if (this.frames.length > MAX_FRAMES) {
      this.frames.splice(0, this.frames.length - MAX_FRAMES);
      this.times.splice(0, this.times.length - MAX_FRAMES);
    }
  }

  private setApplied(headers: Headers): void {
    const applied = Number(headers.get('x-min-score-applied'));
    if (Number.isFinite(applied) && headers.has('x-min-score-applied')) this.applied = applied;
  }

  /** One redraw for the frames of a burst (a reconnect catches up with many at once). */
  private changed(): void {
    this.redraw ??= setTimeout(() => {
      this.redraw = undefined;
      try {
        this.onChange(this);
      } catch (err) {
        this.onError(err);
      }
    }, 0);
  }

  private query(): string {
    return this.minScore === undefined ? '' : `min_score=${this.minScore.toFixed(2)}`;
  }

  /** Follows the results stream until its `end`, reopening it after the last frame seen. */
  private async follow(gen: number): Promise<void> {
    const reading = new AbortController();
    this.reading = reading;
    let wait = RECONNECT_MS;
    try {
      const q = this.query();
      const res = await openEventStream(
        `/v1/vision/tasks/${encodeURIComponent(this.taskId)}/results/stream${q ? `?${q}` : ''}`,
        this.lastEventId,
        reading.signal,
      );
      if (!this.current(gen)) return;
      this.setApplied(res.headers);
      this.changed();
      for await (const ev of parseEventStream(res.body)) {
        if (!this.current(gen)) return;
        if (ev.event === 'end') {
          this.ended = true;
          this.live = false;
          clearTimeout(this.redraw);
          this.redraw = undefined;
          this.onChange(this);
          return;
        }
        if (ev.event !== 'frame') continue;
        this.add([JSON.parse(ev.data) as Frame]);
        if (ev.id !== undefined) this.lastEventId = ev.id;
        this.changed();
      }
    } catch (err) {
      if (!this.current(gen)) return;
      this.onError(err);
      wait = RETRY_MS;
    }
    if (!this.current(gen)) return;
    this.timer = setTimeout(() => this.read(gen), wait);
  }

  /** Reads the pages of an ended task from the first (or the current) cursor to the last. */
  private async page(gen: number): Promise<void> {
    try {
      for (;;) {
        const q = new URLSearchParams(this.query());
        q.set('limit', String(PAGE));
        if (this.cursor) q.set('cursor', this.cursor);
        const r = await api<{ items: Frame[]; next_cursor: string }>(
          'GET',
          `/v1/vision/tasks/${encodeURIComponent(this.taskId)}/results?${q}`,
        );
        if (!this.current(gen)) return;
        this.setApplied(r.headers);
        this.add(r.body.items);
        if (r.body.next_cursor === '') this.ended = true;
        else this.cursor = r.body.next_cursor;
        this.onChange(this);
        if (this.ended) return;
        if (r.body.items.length < PAGE) break;
      }
      // The task ended but its last frames are still being stored.
      this.timer = setTimeout(() => void this.page(gen), POLL_MS);
    } catch (err) {
      if (!this.current(gen)) return;
      this.onError(err);
      this.timer = setTimeout(() => void this.page(gen), RETRY_MS);
    }
  }
}
