import { setTimeout as sleep } from 'node:timers/promises';
import type { Identity } from '@vision/shared';
import type { ReadQuery } from '../domain/read-query';
import { SSE_HEARTBEAT, sseEvent } from '../domain/sse';
import type { ResultsReader } from './read-results';

export interface StreamSettings {
  /** Pause between reads once the stream has caught up with the stored frames. */
  pollMs: number;
  /** Longest silence before a heartbeat comment (well under the gateway's idle cut). */
  heartbeatMs: number;
  /** Longest life of one stream; the client then reconnects with Last-Event-ID. */
  maxDurationMs: number;
  /** A stream whose reader took nothing for this long (back-pressure all the way) is closed (sse-sink.ts). */
  stallMs: number;
}

export interface StreamSink {
  /** Writes one chunk; resolves once the socket can take more (back-pressure). */
  write(chunk: string): Promise<void>;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** How a stream ended: the task's last frame was sent, the maximum duration passed, or the client left. */
export type StreamEnd = 'ended' | 'expired' | 'gone';

/** One page of a paged read: its items, the cursor after each, and the next cursor (empty: nothing more, ever). */
export interface StreamPage {
  items: unknown[];
  itemCursors: string[];
  next_cursor: string;
}

/**
 * A paged read pushed as Server-Sent Events: the page endpoint's reads in a loop, each item one `event` whose id
 * is the cursor after it, `end` once `next_cursor` is empty. The first read happens before `open` so that a bad
 * cursor or an unknown task answers the usual JSON error; after `open` the caller owns the response.
 */
export async function streamPages(
  settings: StreamSettings,
  event: string,
  limit: number,
  read: (cursor: string | undefined) => Promise<StreamPage>,
  first: StreamPage,
  open: () => StreamSink,
): Promise<StreamEnd> {
  let outcome = first;
  const sink = open();
  const started = Date.now();
  let lastWrite = started;
  for (;;) {
    for (let i = 0; i < outcome.items.length; i++) {
      if (sink.signal.aborted) return 'gone';
      await sink.write(sseEvent(event, outcome.items[i], outcome.itemCursors[i]));
      lastWrite = Date.now();
    }
    if (outcome.next_cursor === '') {
      await sink.write(sseEvent('end', {}));
      return 'ended';
    }
    const cursor = outcome.next_cursor;
    if (Date.now() - started >= settings.maxDurationMs) return 'expired';
    if (outcome.items.length < limit) {
      // Caught up: wait for more, with a heartbeat when nothing was written for a while.
      try {
        await sleep(settings.pollMs, undefined, { signal: sink.signal });
      } catch {
        return 'gone';
      }
      if (Date.now() - lastWrite >= settings.heartbeatMs) {
        await sink.write(SSE_HEARTBEAT);
        lastWrite = Date.now();
      }
    }
    if (sink.signal.aborted) return 'gone';
    outcome = await read(cursor);
  }
}

/** GET /v1/vision/tasks/{id}/results/stream: frames as `frame` events (streamPages). */
export async function streamResults(
  reader: ResultsReader,
  settings: StreamSettings,
  req: { taskId: string; identity: Identity; query: ReadQuery },
  open: (appliedMinScore: number) => StreamSink,
): Promise<StreamEnd> {
  const { taskId, identity, query } = req;
  const page = async (cursor: string | undefined): Promise<StreamPage> => {
    const { page: p, itemCursors } = await reader.read(taskId, identity, {
      ...query,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    return { items: p.items, itemCursors, next_cursor: p.next_cursor };
  };
  const first = await reader.read(taskId, identity, query);
  return streamPages(
    settings,
    'frame',
    query.limit,
    page,
    { items: first.page.items, itemCursors: first.itemCursors, next_cursor: first.page.next_cursor },
    () => open(first.appliedMinScore),
  );
}
