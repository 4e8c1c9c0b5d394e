import { metricsRegistry, startMetricsServer } from '../src';

/**
 * prom-client's process collectors (a GC PerformanceObserver, an event-loop delay monitor) live as long
 * as the process and keep whatever module registered them reachable. Importing the metrics module must
 * not start them (each jest test file imports it in its own context, and a worker kept every context,
 * with its PGlite and ONNX memory, until the kernel killed it at 12 GB); the process that serves
 * /metrics starts them, once.
 */
describe('process metrics', () => {
  const processSeries = () =>
    metricsRegistry.getMetricsAsArray().filter((m) => m.name.startsWith('vision_process_'));

  it('are not collected on import, and are collected once by the process that serves /metrics', async () => {
    expect(processSeries()).toEqual([]);
    const first = await startMetricsServer(0, '127.0.0.1');
    const second = await startMetricsServer(0, '127.0.0.1');
    try {
      const names = processSeries().map((m) => m.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'vision_process_process_cpu_user_seconds_total',
          'vision_process_nodejs_eventloop_lag_seconds',
        ]),
      );
      expect(new Set(names).size).toBe(names.length);
      const text = await (await fetch(first.url)).text();
      expect(text).toMatch(/^vision_process_process_resident_memory_bytes \d+/m);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
