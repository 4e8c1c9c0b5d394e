/**
 * The breaker around inference against a backend on loopback: a backend that answers nothing opens it within the
 * hang bound on a single call (a kind not measured yet times out there, not at the longest timeout, and a call
 * measured slow ends there too), and calls
 * that come while the half-open trial is in flight wait for it and are served once it closed the breaker.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InferenceClient } from '../src/inference/inference-client';
import { ServiceClient } from '../src/calls/service-client';
import { createLogger } from '../src/telemetry/logger';
import { signerOf } from '../../../test/helpers/identity';

const identity = { subject: 'acme', requestId: 'req-1' };
const HANG_MS = 400;
const RESET_MS = 300;
const SCENES = [
  { scene_code: 'cow_sheep', enabled: true, engine: 'fake', labels: ['sheep'], lower_bound: 0.3 },
];

describe('the breaker around inference', () => {
  let server: http.Server;
  /** silent: accepts and never answers; late: answers after 200 ms; else at once. */
  let mode: 'silent' | 'late' | 'ok' = 'ok';
  let client: InferenceClient;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      if (mode === 'silent') return;
      const answer = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ scenes: SCENES }));
      if (mode === 'late') setTimeout(answer, 200).unref();
      else answer();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new InferenceClient(
      new ServiceClient('inference', url, signerOf('images')),
      {
        timeoutMs: 10_000,
        hangMs: HANG_MS,
        errorThresholdPercentage: 50,
        resetTimeoutMs: RESET_MS,
        volumeThreshold: 3,
      },
      createLogger('images', { level: 'silent' }),
    );
  });
  afterAll(async () => {
    client.shutdown();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('opens on one call to a silent backend, which waits the hang bound and not the longest timeout', async () => {
    mode = 'silent';
    expect(client.timeoutMs('scenes')).toBe(HANG_MS);
    const started = Date.now();
    await expect(client.scenes(identity)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(HANG_MS + 1000);
    expect(client.state()).toBe('open');
  });

  it('serves the calls that come while the half-open trial is in flight, once it closed the breaker', async () => {
    mode = 'late';
    if (!client.isOpen()) client.breaker.open();
    const until = Date.now() + 10 * RESET_MS;
    while (client.state() !== 'half_open' && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(client.state()).toBe('half_open');
    const calls = [client.scenes(identity), client.scenes(identity), client.scenes(identity)];
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(client.state()).toBe('closed');
  });

  it('ends a call measured slow when the backend goes silent, at the hang bound and not at its own timeout', async () => {
    mode = 'late';
    if (client.state() !== 'closed') client.breaker.close();
    for (let i = 0; i < 5; i++) await client.scenes(identity);
    // Measured at about 200 ms: its timeout is eight times that, well past the hang bound.
    expect(client.timeoutMs('scenes')).toBeGreaterThanOrEqual(HANG_MS + 1000);
    mode = 'silent';
    const started = Date.now();
    await expect(client.scenes(identity)).rejects.toMatchObject({ name: 'UnreachableError', timedOut: true });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(HANG_MS - 50);
    expect(waited).toBeLessThan(HANG_MS + 800);
    expect(client.state()).toBe('open');
  });
});
