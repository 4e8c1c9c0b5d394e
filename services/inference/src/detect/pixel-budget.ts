/**
 * A budget of decoded pixels shared by every image request of this process: an image is decoded only
 * once its pixel count fits in what the images being decoded now leave free, in arrival order (FIFO).
 * Memory for decoding is then bounded by the budget (about 3 bytes per pixel, plus working copies),
 * however many requests arrive at once, and the CPU left for live jobs stays bounded too.
 */
export class PixelBudget {
  private inUse = 0;
  private readonly waiting: { pixels: number; grant: () => void }[] = [];

  constructor(readonly capacity: number) {
    if (!(capacity > 0)) throw new RangeError('pixel budget must be positive');
  }

  /** Waits for `pixels` (at most the whole budget) and returns the function that gives them back. */
  async acquire(pixels: number): Promise<() => void> {
    const want = Math.min(Math.max(1, Math.ceil(pixels)), this.capacity);
    if (this.waiting.length === 0 && this.inUse + want <= this.capacity) this.inUse += want;
    else await new Promise<void>((grant) => this.waiting.push({ pixels: want, grant }));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse -= want;
      this.drain();
    };
  }

  /** Pixels granted now, and requests waiting (for tests and metrics). */
  usage(): { inUse: number; waiting: number } {
    return { inUse: this.inUse, waiting: this.waiting.length };
  }

  private drain(): void {
    while (this.waiting.length > 0 && this.inUse + this.waiting[0].pixels <= this.capacity) {
      const next = this.waiting.shift()!;
      this.inUse += next.pixels;
      next.grant();
    }
  }
}
