import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { standaloneOnly } from '../helpers/composition';
import { startStack, type TestStack } from '../helpers/stack';

const KEY = 'e2e-key-shapes-0123456789';
const AUTH = `Bearer ${KEY}`;
/** The gateway's parser, its shape guard and its route table answer these; no service is called. */
const atTheGateway = standaloneOnly('the gateway answers before it forwards anything');

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience: the error envelope
  body: any;
}

/** One request with node's http client: the path goes out exactly as written (no URL normalisation). */
function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<Raw> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method, path, headers: { authorization: AUTH, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON (Node's own 4xx answers)
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Raw bytes on a socket; resolves with the status line's code of the answer. */
function rawStatus(base: string, bytes: Buffer): Promise<number> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(url.port), url.hostname);
    let got = '';
    sock.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) {
        sock.destroy();
        resolve(Number(m[1]));
      }
    });
    sock.on('error', reject);
    sock.on('close', () => resolve(/^HTTP\/1\.1 (\d{3})/.exec(got) ? Number(RegExp.$1) : 0));
    sock.write(bytes);
  });
}

const reasonOf = (r: Raw): unknown =>
  (r.body as { error?: { details?: { reason?: unknown } } })?.error?.details?.reason;

describe('request shapes: nothing a client sends gets a 5xx', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ keys: `${KEY}:shapes` });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  atTheGateway.it.each([
    ['/v1/vision/tasks/%ZZ', 'invalid_path'],
    ['/v1/vision/tasks/%00', 'invalid_path'],
    ['/v1/vision/tasks/abc%00/results', 'invalid_path'],
    ['/v1/vision/tasks/%E0%A4%A', 'invalid_path'],
    ['/v1/vision/tasks/a%0Ab/stop', 'invalid_path'],
    ['/v1/vision/tasks?cursor=%ZZ', 'invalid_query'],
    [`/v1/vision/tasks/${randomUUID()}/results?cursor=%00`, 'invalid_query'],
    [`/v1/vision/tasks/${'a'.repeat(9000)}`, 'invalid_path'],
  ])('GET %.60s answers 400 (%s)', async (path, reason) => {
    const r = await send(stack.url, path.endsWith('/stop') ? 'POST' : 'GET', path);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
    expect(reasonOf(r)).toBe(reason);
  });

  atTheGateway.it(
    'answers 400 with the error envelope for NUL bytes and over-long heads that never reach a route',
    async () => {
      const nul = await rawStatus(
        stack.url,
        Buffer.from(
          `GET /v1/vision/tasks/a\0b HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`,
          'latin1',
        ),
      );
      expect(nul).toBe(400);
      // Over 16 KiB of head: Node's parser refuses it (its own answer would be a bare 431).
      const longHeader = await send(stack.url, 'GET', '/v1/vision/quota', { 'x-filler': 'a'.repeat(20_000) });
      const longQuery = await send(
        stack.url,
        'GET',
        `/v1/vision/tasks/${randomUUID()}/results?cursor=${'%C2%88'.repeat(4000)}&min_score=false`,
      );
      for (const r of [longHeader, longQuery]) {
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
        expect(reasonOf(r)).toBe('malformed_request');
        expect(r.headers['x-request-id']).toBe(r.body.error.request_id);
      }
      const longPath = await rawStatus(
        stack.url,
        Buffer.from(`GET /v1/vision/tasks/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      expect(longPath).toBe(400);
    },
  );

  it('refuses repeated query parameters with 400', async () => {
    for (const path of [
      '/v1/vision/tasks?limit=1&limit=2',
      `/v1/vision/tasks/${randomUUID()}/results?limit=1&limit=2`,
    ]) {
      const r = await send(stack.url, 'GET', path);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
    }
  });

  it.each([
    ['/v1/vision/tasks', 'text/plain', '{"scene_code":"ship","stream_url":"rtsp://127.0.0.1/x"}'],
    ['/v1/vision/tasks', 'application/xml', '<a/>'],
    ['/v1/vision/tasks', 'application/json; charset=latin1', '{}'],
    ['/v1/vision/tasks', 'application/json', '{"scene_code":'],
    ['/v1/vision/video-tasks', 'application/json', '{}'],
    ['/v1/vision/video-tasks', 'multipart/form-data', '--x\r\n'],
    ['/v1/vision/image-detections', 'text/plain', 'x'],
    ['/v1/vision/image-detections', 'multipart/form-data; boundary=', 'x'],
  ])('POST %s as %s answers 400', async (path, type, body) => {
    const r = await send(
      stack.url,
      'POST',
      path,
      { 'content-type': type, 'idempotency-key': randomUUID() },
      body,
    );
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
  });

  it('answers 400 without a content type at all', async () => {
    for (const path of ['/v1/vision/tasks', '/v1/vision/video-tasks', '/v1/vision/image-detections']) {
      const r = await send(stack.url, 'POST', path, { 'idempotency-key': randomUUID() }, 'abc');
      expect(r.status).toBe(400);
    }
  });

  it.each([
    ['/v1/vision/video-tasks', 'file', 'clip.mp4'],
    ['/v1/vision/image-detections', 'files', 'a.jpg'],
  ])('a truncated multipart body to %s answers 400 malformed_multipart', async (path, field, name) => {
    const body = Buffer.concat([
      Buffer.from(
        `--XX\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      ),
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70]),
    ]);
    const r = await send(
      stack.url,
      'POST',
      path,
      { 'content-type': 'multipart/form-data; boundary=XX', 'idempotency-key': randomUUID() },
      body,
    );
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
    expect(reasonOf(r)).toBe('malformed_multipart');
  });

  atTheGateway.it.each([
    ['DELETE', '/v1/vision/quota', 'GET, HEAD, OPTIONS'],
    ['PUT', '/v1/vision/tasks', 'GET, POST, HEAD, OPTIONS'],
    ['PATCH', `/v1/vision/tasks/${randomUUID()}`, 'GET, HEAD, OPTIONS'],
    ['GET', `/v1/vision/tasks/${randomUUID()}/stop`, 'POST, OPTIONS'],
    ['POST', `/v1/vision/tasks/${randomUUID()}/results`, 'GET, HEAD, OPTIONS'],
    ['GET', '/v1/vision/image-detections', 'POST, OPTIONS'],
    ['TRACE', '/api/op/v1/scenes', 'GET, HEAD, OPTIONS'],
    ['POST', '/openapi.json', 'GET, HEAD, OPTIONS'],
  ])('%s %s answers 405 with Allow', async (method, path, allow) => {
    const r = await send(stack.url, method, path);
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe(allow);
    if (method !== 'TRACE') expect(r.body.error.code).toBe('OP-METHOD-NOT-ALLOWED');
  });

  atTheGateway.it('answers OPTIONS with 204 and Allow', async () => {
    const r = await send(stack.url, 'OPTIONS', '/v1/vision/tasks');
    expect(r.status).toBe(204);
    expect(r.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
  });

  atTheGateway.it('serves /openapi.json without a key', async () => {
    const r = await send(stack.url, 'GET', '/openapi.json', { authorization: '' });
    expect(r.status).toBe(200);
    expect(r.body.openapi).toMatch(/^3\./);
  });
});
