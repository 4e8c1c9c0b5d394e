import type { DistributedStack } from '../helpers/distributed';
import { client, describeDistributed, startFaultStack, waitFor } from './support';

describeDistributed('fault: Redis is down', () => {
  let stack: DistributedStack;
  beforeAll(async () => {
    stack = await startFaultStack({ env: { GATEWAY_QPS: '1', GATEWAY_BURST: '3' } });
  }, 180_000);
  afterAll(async () => {
    await stack?.startServer('redis').catch(() => undefined);
    await stack?.close();
  });

  // The gateway's full report is on its internal (metrics) port; its public /readyz says up or down.
  const readyz = async () => {
    const internal = stack.deployment.procs.gateway[0].metricsUrl.replace(/\/metrics$/, '/readyz');
    const r = await fetch(internal);
    const pub = await fetch(`${stack.url}/readyz`);
    return {
      status: r.status,
      body: (await r.json()) as { status: string; dependencies: Record<string, { status: string }> },
      public: { status: pub.status, body: (await pub.json()) as unknown },
    };
  };

  it('keeps serving with per-process limits, reports itself degraded, and returns to shared limits', async () => {
    const c = client(stack);
    expect((await readyz()).body.status).toBe('up');
    await stack.stopServer('redis');

    // Still ready (degraded, not down): the limiter falls back to this process's memory.
    const degraded = await waitFor('/readyz to report the limiter degraded', async () => {
      const r = await readyz();
      return r.body.dependencies.limiter?.status === 'degraded' ? r : undefined;
    });
    expect(degraded.status).toBe(200);
    expect(degraded.body.status).toBe('degraded');
    expect(degraded.public).toEqual({ status: 200, body: { status: 'up' } });

    // Requests are served, and still limited (1/s + burst 3) by the in-memory fallback.
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await c.api('GET', '/v1/vision/quota')).status);
    expect(statuses[0]).toBe(200);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(4);
    expect(statuses).toContain(429);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);

    await stack.startServer('redis');
    await waitFor(
      '/readyz to be up again',
      async () => ((await readyz()).body.status === 'up' ? true : undefined),
      30_000,
    );
    const back = await waitFor(
      'a request within limits',
      async () => {
        const r = await c.api('GET', '/v1/vision/quota');
        return r.status === 200 ? r : undefined;
      },
      30_000,
    );
    expect(back.status).toBe(200);
  }, 180_000);
});
