/**
 * Calls answered in process (standalone): a registered answerer takes the calls it knows, everything else
 * (and everything once its service stopped) goes over HTTP, and an answer in process is bounded as an HTTP
 * call is: its timeout and its caller's abort fail it as an unanswered call, and the breaker around
 * inference opens on a hang in process as it does on a silent backend.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LocalCalls, type LocalAnswerer } from '../src/calls/local-calls';
import { type CallResult, ServiceClient, UnreachableError } from '../src/calls/service-client';
import { InferenceClient } from '../src/inference/inference-client';
import { createLogger } from '../src/telemetry/logger';
import { signerOf } from '../../../test/helpers/identity';

const identity = { subject: 'acme', requestId: 'req-1' };
const HANG_MS = 300;

describe('calls answered in process', () => {
  let server: http.Server;
  let url: string;
  let httpCalls = 0;
  const local = new LocalCalls();
  /** What the registered answerer does with /here: answer, hang (recording its signal), or leave it. */
  let answer: (signal: AbortSignal) => Promise<CallResult> | undefined;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      httpCalls++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ via: 'http' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    httpCalls = 0;
  });

  const answerer: LocalAnswerer = (path, _opts, signal) => (path === '/here' ? answer(signal) : undefined);
  const client = () =>
    new ServiceClient('inference', url, signerOf('images'), 10_000, local.answererFor('inference'));

  it('takes the calls its service answers, and leaves the others, and all once the service stopped, to HTTP', async () => {
    const stop = local.register('inference', answerer);
    answer = async () => ({ status: 200, body: { via: 'process' }, headers: {} });
    const c = client();
    expect((await c.call('/here', { identity })).body).toEqual({ via: 'process' });
    expect(httpCalls).toBe(0);
    expect((await c.call('/elsewhere', { identity })).body).toEqual({ via: 'http' });
    expect(httpCalls).toBe(1);
    stop();
    expect((await c.call('/here', { identity })).body).toEqual({ via: 'http' });
    expect(httpCalls).toBe(2);
  });

  it('a hang in process times out as an unanswered call, and the work is told to stop', async () => {
    const stop = local.register('inference', answerer);
    let seen: AbortSignal | undefined;
    answer = (signal) => ((seen = signal), new Promise<CallResult>(() => undefined));
    const started = Date.now();
    const err = await client()
      .call('/here', { identity, timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect(err).toMatchObject({ timedOut: true, maybeDelivered: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(seen?.aborted).toBe(true);
    stop();
  });

  it("its caller's abort ends it at once, not as a timeout", async () => {
    const stop = local.register('inference', answerer);
    answer = () => new Promise<CallResult>(() => undefined);
    const gone = new AbortController();
    const call = client().call('/here', { identity, signal: gone.signal });
    gone.abort();
    await expect(call).rejects.toMatchObject({ name: 'UnreachableError', timedOut: false });
    stop();
  });

  it('the breaker around inference opens on one detect call that hangs in process, within the hang bound', async () => {
    const stop = local.register('inference', (path, _opts, signal) =>
      path.startsWith('/internal/v1/detect') ? answerer('/here', { identity }, signal) : undefined,
    );
    answer = () => new Promise<CallResult>(() => undefined);
    const inference = new InferenceClient(
      client(),
      {
        timeoutMs: 10_000,
        hangMs: HANG_MS,
        errorThresholdPercentage: 50,
        resetTimeoutMs: 60_000,
        volumeThreshold: 3,
      },
      createLogger('images', { level: 'silent' }),
    );
    const started = Date.now();
    const outcome = await inference.detect(identity, 'cow_sheep', Buffer.from('jpeg'), 'image/jpeg');
    expect(outcome).toMatchObject({ status: 'failed', failure: 'inference_unavailable' });
    expect(Date.now() - started).toBeLessThan(HANG_MS + 1000);
    expect(inference.state()).toBe('open');
    expect(httpCalls).toBe(0);
    inference.shutdown();
    stop();
  });
});
