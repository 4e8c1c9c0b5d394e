/** The shared multipart reader against a real HTTP server and client (node http + supertest). */
import http from 'node:http';
import request from 'supertest';
import { ApiError, IMAGE_UPLOAD, type MultipartSpec, REASON, bufferPart, readMultipart } from '../src';

const MiB = 1024 * 1024;

function serverFor(spec: Omit<MultipartSpec<number>, 'onFile'>, mode: 'sizes' | 'flags' = 'sizes') {
  return http.createServer((req, res) => {
    readMultipart(req, {
      ...spec,
      onFile: async (part) => {
        const data = await bufferPart(part);
        return mode === 'flags' ? (part.truncated() ? -1 : data.length) : data.length;
      },
    }).then(
      (form) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(form)),
      (err: Error) =>
        res
          .writeHead(err instanceof ApiError ? err.status : 500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ reason: err instanceof ApiError ? err.details?.reason : err.message })),
    );
  });
}

const images = { ...IMAGE_UPLOAD, valueFields: [...IMAGE_UPLOAD.valueFields] };

test('a file of exactly maxFileBytes is read whole; one byte more is refused (file_too_large)', async () => {
  const server = serverFor(images);
  const exact = await request(server)
    .post('/')
    .field('scene_code', 'ship')
    .attach('files', Buffer.alloc(8 * MiB, 1), 'a.png');
  expect(exact.status).toBe(200);
  expect(exact.body).toEqual({ fields: { scene_code: 'ship' }, files: [8 * MiB] });
  const over = await request(server)
    .post('/')
    .attach('files', Buffer.alloc(8 * MiB + 1, 1), 'a.png');
  expect(over.status).toBe(400);
  expect(over.body.reason).toBe(REASON.file_too_large);
});

test("oversize 'flag' keeps the request and flags the file", async () => {
  const server = serverFor({ ...images, oversize: 'flag' }, 'flags');
  const r = await request(server)
    .post('/')
    .attach('files', Buffer.alloc(8 * MiB, 1), 'a.png')
    .attach('files', Buffer.alloc(8 * MiB + 1, 1), 'b.png');
  expect(r.body).toEqual({ fields: {}, files: [8 * MiB, -1] });
});

test.each<[string, (t: request.Test) => request.Test, string]>([
  ['not multipart', (t) => t.set('content-type', 'application/json').send('{}'), REASON.not_multipart],
  ['other file field', (t) => t.attach('file', Buffer.from('x'), 'a'), REASON.unknown_field],
  [
    'other value field',
    (t) => t.field('min_score', '1').attach('files', Buffer.from('x'), 'a'),
    REASON.unknown_field,
  ],
  [
    'value field twice',
    (t) => t.field('scene_code', 'a').field('scene_code', 'b').attach('files', Buffer.from('x'), 'a'),
    REASON.duplicate_field,
  ],
  ['long value', (t) => t.field('scene_code', 'x'.repeat(300)), REASON.field_too_large],
  ['no file', (t) => t.field('scene_code', 'ship'), REASON.file_missing],
  [
    'too many files',
    (t) => {
      for (let i = 0; i < 11; i++) t = t.attach('files', Buffer.from('x'), `f${i}`);
      return t;
    },
    REASON.too_many_files,
  ],
  [
    'declared body too large',
    (t) =>
      t
        .set('content-type', 'multipart/form-data; boundary=x')
        .set('content-length', String(82 * MiB))
        .send(''),
    REASON.body_too_large,
  ],
  [
    // Found by schemathesis: busboy hands such a part on with name undefined.
    'value part without a name',
    (t) =>
      t
        .set('content-type', 'multipart/form-data; boundary=x')
        .send('--x\r\nContent-Disposition: form-data\r\n\r\nv\r\n--x--\r\n'),
    REASON.unknown_field,
  ],
  [
    'file part without a name',
    (t) =>
      t
        .set('content-type', 'multipart/form-data; boundary=x')
        .send('--x\r\nContent-Disposition: form-data; filename="a.png"\r\n\r\nv\r\n--x--\r\n'),
    REASON.unknown_field,
  ],
  [
    'body ends inside a file',
    (t) =>
      t
        .set('content-type', 'multipart/form-data; boundary=x')
        .send('--x\r\nContent-Disposition: form-data; name="files"; filename="a.png"\r\n\r\nvvvv'),
    REASON.malformed_multipart,
  ],
  [
    'no boundary',
    (t) => t.set('content-type', 'multipart/form-data').send('--x--'),
    REASON.malformed_multipart,
  ],
])('%s -> 400 %s', async (_name, send, reason) => {
  const r = await send(request(serverFor(images)).post('/'));
  expect(r.status).toBe(400);
  expect(r.body.reason).toBe(reason);
});

test('a handler that refuses a file fails the request with its error after every handler settled', async () => {
  let settled = 0;
  const server = http.createServer((req, res) => {
    readMultipart(req, {
      ...images,
      onFile: async (part) => {
        try {
          if (part.seq === 1)
            throw new ApiError('OP-TASK-REQUEST-INVALID', 'no', { reason: REASON.unsupported_type });
          return (await bufferPart(part)).length;
        } finally {
          settled++;
        }
      },
    }).catch((err: ApiError) => res.writeHead(err.status).end(String(err.details?.reason)));
  });
  const r = await request(server)
    .post('/')
    .attach('files', Buffer.alloc(1000), 'a')
    .attach('files', Buffer.alloc(1000), 'b');
  expect(r.status).toBe(400);
  expect(r.text).toBe(REASON.unsupported_type);
  expect(settled).toBe(2);
});
