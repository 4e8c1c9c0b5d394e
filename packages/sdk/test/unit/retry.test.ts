import { Readable } from 'node:stream';
import { VisionApiError, VisionClient, VisionNetworkError } from '../../src';

/**
 * The retry policy of every create: a 5xx, a 429 after its Retry-After and a network error
 * are sent again with the same Idempotency-Key; a used-up daily quota and a request whose body is a
 * caller's stream are not sent twice. The service is a scripted fetch here (the retries against the
 * real stack, with a cut connection and real 429s, are in ../client.test.ts).
 */
type Answer = Response | Error;

function scripted(answers: Answer[]) {
  const sent: { method: string; key: string | null; at: number }[] = [];
  const fetchImpl = async (req: Request): Promise<Response> => {
    sent.push({ method: req.method, key: req.headers.get('idempotency-key'), at: Date.now() });
    await req.arrayBuffer(); // the body goes out, as over a connection
    const next = answers.shift();
    if (!next) throw new Error('no answer scripted');
    if (next instanceof Error) throw next;
    return next;
  };
  return { sent, fetchImpl };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const task = { task_id: 't-1', status: 'running', scene_code: 'person_vehicle' };
const failure = (code: string, message = code) => ({ error: { code, message, request_id: 'r-1' } });

const clientWith = (fetchImpl: (req: Request) => Promise<Response>) =>
  new VisionClient({
    baseUrl: 'http://vision.test',
    apiKey: 'k-0123456789',
    fetch: fetchImpl,
    retry: { minDelayMs: 1, maxDelayMs: 5 },
  });

describe('SDK retries', () => {
  it('sends a create answered 503 again with the same Idempotency-Key', async () => {
    const { sent, fetchImpl } = scripted([
      json(503, failure('OP-SYS-UNAVAILABLE')),
      json(502, 'bad gateway'),
      json(201, task),
    ]);
    const created = await clientWith(fetchImpl).createStreamTask({
      streamUrl: 'rtsp://cam.test/1',
      scene: 'person_vehicle',
    });
    expect(created.httpStatus).toBe(201);
    expect(sent.map((s) => s.key)).toEqual([
      created.idempotencyKey,
      created.idempotencyKey,
      created.idempotencyKey,
    ]);
  });

  it('waits for Retry-After before sending a rate-limited create again, with the same key', async () => {
    const { sent, fetchImpl } = scripted([
      json(429, failure('OP-QUOTA-RATE-LIMITED'), { 'retry-after': '1' }),
      json(201, task),
    ]);
    const created = await clientWith(fetchImpl).createFileTask({
      file: { data: Buffer.from('not really a video'), filename: 'a.mp4' },
      scene: 'person_vehicle',
    });
    expect(created.httpStatus).toBe(201);
    expect(sent.map((s) => s.key)).toEqual([created.idempotencyKey, created.idempotencyKey]);
    expect(sent[1].at - sent[0].at).toBeGreaterThanOrEqual(990);
  });

  it('retries a network error, and says how many attempts failed when none got an answer', async () => {
    const reset = () =>
      new TypeError('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) });
    const ok = scripted([reset(), json(201, task)]);
    await clientWith(ok.fetchImpl).createStreamTask({
      streamUrl: 'rtsp://cam.test/1',
      scene: 'person_vehicle',
    });
    expect(new Set(ok.sent.map((s) => s.key)).size).toBe(1);
    expect(ok.sent).toHaveLength(2);

    const down = scripted([reset(), reset(), reset(), reset(), reset()]);
    const err = await clientWith(down.fetchImpl)
      .quota()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VisionNetworkError);
    expect(err).toMatchObject({ attempts: 5 });
    expect((err as Error).message).toContain('ECONNRESET');
  });

  it('does not send again when the daily quota is used up, nor a body read from a stream', async () => {
    const exhausted = scripted([json(429, failure('OP-QUOTA-DAILY-EXHAUSTED'), { 'retry-after': '1' })]);
    const err = await clientWith(exhausted.fetchImpl)
      .createStreamTask({ streamUrl: 'rtsp://cam.test/1', scene: 'person_vehicle' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VisionApiError);
    expect(err).toMatchObject({ status: 429, code: 'OP-QUOTA-DAILY-EXHAUSTED', requestId: 'r-1' });
    expect(exhausted.sent).toHaveLength(1);

    const streamed = scripted([json(503, failure('OP-SYS-UNAVAILABLE')), json(201, task)]);
    const once = await clientWith(streamed.fetchImpl)
      .createFileTask({ file: { data: Readable.from([Buffer.from('bytes')]), filename: 'a.mp4' } })
      .catch((e: unknown) => e);
    expect(once).toMatchObject({ status: 503, code: 'OP-SYS-UNAVAILABLE' });
    expect(streamed.sent).toHaveLength(1);
  });
});
