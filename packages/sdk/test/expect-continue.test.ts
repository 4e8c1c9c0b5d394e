import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { VisionApiError, VisionClient } from '../src';

/** What the server saw of one upload. */
interface Seen {
  expect?: string;
  declared: number;
  received: number;
}

/**
 * A server that judges each upload on its head, as the gateway does: `admit` says whether it sends
 * `100 Continue` and reads the body (201), or answers 503 overloaded at once.
 */
async function startJudge(admit: () => boolean) {
  const seen: Seen[] = [];
  const server = http.createServer();
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const s: Seen = {
      expect: req.headers.expect,
      declared: Number(req.headers['content-length']),
      received: 0,
    };
    seen.push(s);
    req.on('data', (d: Buffer) => (s.received += d.length));
    if (!admit()) {
      const body = JSON.stringify({
        error: { code: 'OP-SYS-UNAVAILABLE', message: 'full', details: { reason: 'overloaded' } },
      });
      res.writeHead(503, {
        'content-type': 'application/json',
        'retry-after': '1',
        'content-length': body.length,
      });
      return void res.end(body);
    }
    res.writeContinue();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ task_id: 't', status: 'succeeded', results: [] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const IMAGE = Buffer.alloc(200_000, 7);

describe('uploads send Expect: 100-continue', () => {
  it('sends no byte of the body when the service refuses the upload on its head', async () => {
    const judge = await startJudge(() => false);
    try {
      const client = new VisionClient({ baseUrl: judge.url, apiKey: 'k', retry: { retries: 0 } });
      const err = (await client.detectImages([IMAGE]).catch((e: unknown) => e)) as VisionApiError;
      expect(err).toBeInstanceOf(VisionApiError);
      expect({ status: err.status, code: err.code }).toEqual({ status: 503, code: 'OP-SYS-UNAVAILABLE' });
      expect(judge.seen).toEqual([{ expect: '100-continue', declared: expect.any(Number), received: 0 }]);
      expect(judge.seen[0]!.declared).toBeGreaterThan(IMAGE.length);
    } finally {
      await judge.close();
    }
  });

  it('sends the whole body once the service answered 100 Continue', async () => {
    const judge = await startJudge(() => true);
    try {
      const client = new VisionClient({ baseUrl: judge.url, apiKey: 'k', retry: { retries: 0 } });
      const progress: number[] = [];
      const answer = await client.detectImages([IMAGE], {
        onUploadProgress: (p) => progress.push(p.loaded),
      });
      expect(answer.task_id).toBe('t');
      expect(judge.seen).toHaveLength(1);
      expect(judge.seen[0]!.received).toBe(judge.seen[0]!.declared);
      expect(progress.at(-1)).toBe(judge.seen[0]!.declared);
    } finally {
      await judge.close();
    }
  });

  it('a refused upload is sent again after Retry-After with the same key, and then served', async () => {
    let calls = 0;
    const judge = await startJudge(() => ++calls > 1);
    try {
      const client = new VisionClient({ baseUrl: judge.url, apiKey: 'k', retry: { minDelayMs: 10 } });
      const answer = await client.detectImages([IMAGE], {
        idempotencyKey: 'b6a0a0c4-5d7e-4a53-9b1d-0a6c2f3e9d11',
      });
      expect(answer.task_id).toBe('t');
      expect(judge.seen.map((s) => s.received)).toEqual([0, judge.seen[1]!.declared]);
    } finally {
      await judge.close();
    }
  });
});
