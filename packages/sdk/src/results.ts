export interface ResultsOptions {
  /** Lower bound of confidence, 0..1 (below the scene's inference lower bound it is clamped). */
  minScore?: number;
  /** Frames per page, 1..500 (default 500). */
  limit?: number;
  /**
   * What to do when a page comes back empty while the task is still running (the cursor is not
   * empty): `true` (default) polls every `pollIntervalMs` until the task ends and every frame is
   * delivered; `false` stops there (you have every frame stored so far).
   */
  follow?: boolean;
  /** Delay between polls of a running task in ms (default 1,000). */
  pollIntervalMs?: number;
  /** Resume from a cursor of an earlier page. */
  cursor?: string;
  signal?: AbortSignal;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A page of a cursor-paged list (result frames, zone and line events). */
export interface CursorPage {
  items: unknown[];
  next_cursor: string;
}

/**
 * Follows `next_cursor` page after page: every item once, in order. The last page is the one whose
 * `next_cursor` is empty (the task ended and everything was returned; docs/RESULTS.md, "Results paging").
 */
export async function* iterateResultPages<P extends CursorPage>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  opts: Omit<ResultsOptions, 'minScore' | 'limit'> = {},
): AsyncGenerator<P> {
  let cursor = opts.cursor || undefined;
  for (;;) {
    opts.signal?.throwIfAborted();
    const page = await fetchPage(cursor);
    if (page.items.length > 0) yield page;
    if (!page.next_cursor) return;
    cursor = page.next_cursor;
    if (page.items.length === 0) {
      if (opts.follow === false) return;
      await sleep(opts.pollIntervalMs ?? 1000);
    }
  }
}
