import { monitorEventLoopDelay } from 'node:perf_hooks';
import { metrics } from '@vision/shared';

const RESOLUTION_MS = 10;

/**
 * Reports how late the gateway's event loop ran since the previous scrape (vision_gateway_event_loop_delay_seconds,
 * beyond the 10 ms interval of the timer that samples it):
 * the wait a request's answer may have had behind other work on the same loop. Returns the function that stops it.
 */
export function watchEventLoop(): () => void {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  // Nanoseconds between the sampling timer's runs, less its own interval; a window with no sample reads 0.
  const seconds = (ns: number) => (Number.isFinite(ns) ? Math.max(0, ns / 1e9 - RESOLUTION_MS / 1000) : 0);
  const stop = metrics.gatewayLoopDelay.addSource(() => {
    const figures: Array<[{ quantile: string }, number]> = [
      [{ quantile: '0.5' }, seconds(histogram.percentile(50))],
      [{ quantile: '0.99' }, seconds(histogram.percentile(99))],
      [{ quantile: 'max' }, seconds(histogram.max)],
    ];
    histogram.reset();
    return figures;
  });
  return () => {
    stop();
    histogram.disable();
  };
}
