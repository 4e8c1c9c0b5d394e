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
}

export interface StreamSink {
  /** Writes one chunk; resolves once the socket can take more (back-pressure). */
  write(chunk: string): Promise<void>;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** How a stream ended: the task's last frame was sent, the maximum duration passed, or the client left. */
export type StreamEnd = 'ended' | 'expired' | 'gone';

/**
 * GET /v1/vision/tasks/{id}/results/stream: the page endpoint's reads in a loop, each frame one event
 * whose id is the cursor after it. The first read happens before `open` so that a bad cursor or an
 * unknown task answers the usual JSON error; after `open` the caller owns the response.
 */
export async function streamResults(
  reader: ResultsReader,
  settings: StreamSettings,
  req: { taskId: string; identity: Identity; query: ReadQuery },
  open: (appliedMinScore: number) => StreamSink,
): Promise<StreamEnd> {
  const { taskId, identity } = req;
  let query = req.query;
  let outcome = await reader.read(taskId, identity, query);
  const sink = open(outcome.appliedMinScore);
  const started = Date.now();
  let lastWrite = started;
  for (;;) {
    const { page, itemCursors } = outcome;
    for (let i = 0; i < page.items.length; i++) {
      if (sink.signal.aborted) return 'gone';
      await sink.write(sseEvent('frame', page.items[i], itemCursors[i]));
      lastWrite = Date.now();
    }
    if (page.next_cursor === '') {
      await sink.write(sseEvent('end', {}));
      return 'ended';
    }
    query = { ...query, cursor: page.next_cursor };
    if (Date.now() - started >= settings.maxDurationMs) return 'expired';
    if (page.items.length < query.limit) {
      // Caught up: wait for more frames, with a heartbeat when nothing was written for a while.
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
    outcome = await reader.read(taskId, identity, query);
  }
}
