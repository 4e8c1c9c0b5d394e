import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** How a wait for a refused write to drain ended. */
export type DrainOutcome = 'drained' | 'stalled' | 'gone';

/**
 * Waits for `out` to drain after a write it refused (back-pressure: every buffer between it and its reader is
 * full). A reader that takes nothing for `stallMs` has stopped reading: `stalled`, and the caller closes the
 * stream (docs/CONNECTIONS.md, "Streams whose reader stopped reading"). `gone` when `signal` aborts first (the
 * reader left). Never throws.
 */
export async function awaitDrain(out: Writable, stallMs: number, signal: AbortSignal): Promise<DrainOutcome> {
  if (signal.aborted) return 'gone';
  const waiting = new AbortController();
  const stop = () => waiting.abort();
  signal.addEventListener('abort', stop, { once: true });
  const timer = setTimeout(stop, stallMs);
  try {
    await once(out, 'drain', { signal: waiting.signal });
    return 'drained';
  } catch {
    return signal.aborted ? 'gone' : 'stalled';
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  }
}
