import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, createLogger, createServiceApp, listen } from '@vision/shared';
import { start, type RunningGateway } from '../src/index';
import { identityDir, verifierOfAll } from '../../../test/helpers/identity';

const KEY = 'key-upload-aaaaaaaa';
const IDLE_MS = 600;
const logger = createLogger('test', { level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An upstream (shared createServiceApp) that counts the bytes of each upload and notes aborted ones. */
async function upstream() {
  const seen = { completed: [] as number[], aborted: 0 };
  const app = createServiceApp({ name: 'tasks', logger, identity: verifierOfAll() }, (a) => {
    a.post('/v1/vision/video-tasks', (req, res) => {
      let bytes = 0;
      req.on('data', (c: Buffer) => (bytes += c.length));
      req.on('aborted', () => seen.aborted++);
      req.on('end', () => {
        seen.completed.push(bytes);
        res.status(201).json({ bytes });
      });
    });
  });
  const server = await listen(app, 0, '127.0.0.1');
  return { seen, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Sends `chunks` chunks of 16 KiB, waiting `gapMs` before each; `stallAfter` stops sending (socket kept open). */
function paced(base: string, chunks: number, gapMs: number, stallAfter = Infinity) {
  const url = new URL(base);
  const size = 16 * 1024;
  return new Promise<{ status: number; body: { bytes?: number; error?: { details?: { reason?: string } } } }>(
    (resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/v1/vision/video-tasks',
          headers: {
            authorization: `Bearer ${KEY}`,
            'content-type': 'application/octet-stream',
            'content-length': String(chunks * size),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || '{}') });
          });
        },
      );
      req.on('error', reject);
      void (async () => {
        for (let i = 0; i < chunks; i++) {
          if (i >= stallAfter) return;
          await sleep(gapMs);
          req.write(Buffer.alloc(size, i));
        }
        req.end();
      })();
    },
  );
}

describe('gateway: upload pacing', () => {
  let gw: RunningGateway;
  let up: Awaited<ReturnType<typeof upstream>>;
  beforeAll(async () => {
    up = await upstream();
    gw = await start({
      env: {
        VISION_DATA_DIR: ':memory:',
        VISION_IDENTITY_DIR: identityDir(),
        LOG_LEVEL: 'silent',
        VISION_API_KEYS: `${KEY}:acme`,
        GATEWAY_UPLOAD_IDLE_MS: String(IDLE_MS),
        TASKS_URL: up.url,
        RESULTS_URL: up.url,
        QUOTA_URL: up.url,
        IMAGES_URL: up.url,
      },
      port: 0,
      host: '127.0.0.1',
      logger,
    });
  });
  afterAll(async () => {
    await gw.close();
    await closeServer(up.server);
  });

  it('relays a slow but steady upload that takes many times the idle limit', async () => {
    const t0 = Date.now();
    const r = await paced(gw.url, 12, IDLE_MS / 3);
    expect(r.status).toBe(201);
    expect(r.body.bytes).toBe(12 * 16 * 1024);
    expect(Date.now() - t0).toBeGreaterThan(2 * IDLE_MS);
  });

  it('cuts an upload that stops sending: 400 upload_stalled, and the upstream sees its request aborted', async () => {
    const before = { ...up.seen, completed: [...up.seen.completed] };
    const r = await paced(gw.url, 40, 20, 5);
    expect(r.status).toBe(400);
    expect(r.body.error?.details?.reason).toBe('upload_stalled');
    for (let i = 0; i < 50 && up.seen.aborted === before.aborted; i++) await sleep(50);
    expect(up.seen.aborted).toBe(before.aborted + 1);
    expect(up.seen.completed).toEqual(before.completed);
  });
});
