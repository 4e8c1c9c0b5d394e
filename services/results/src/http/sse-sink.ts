import type { Response } from 'express';
import { awaitDrain, type Logger } from '@vision/shared';
import type { StreamSink } from '../use-cases/stream-results';

/**
 * The sink of a Server-Sent Events response (results and events streams): a write resolves once the socket can
 * take more. A reader that takes nothing for `stallMs` while the buffers on the way are full has stopped
 * reading: the stream is closed (docs/CONNECTIONS.md, "Streams whose reader stopped reading"), and the client
 * may resume it with Last-Event-ID.
 */
export function sseSink(res: Response, stallMs: number, logger: Logger, requestId: string): StreamSink {
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  return {
    signal: gone.signal,
    write: async (chunk) => {
      if (gone.signal.aborted || res.write(chunk)) return;
      if ((await awaitDrain(res, stallMs, gone.signal)) !== 'stalled') return;
      logger.info({ requestId, stall_ms: stallMs }, 'closing a stream whose reader stopped reading');
      res.destroy();
    },
  };
}
