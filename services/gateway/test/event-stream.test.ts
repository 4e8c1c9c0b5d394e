import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, createLogger, createServiceApp, listen } from '@vision/shared';
import { start, type RunningGateway } from '../src/index';
import { identityDir, verifierOfAll } from '../../../test/helpers/identity';

const KEY = 'key-sse-aaaaaaaa';
const logger = createLogger('test', { level: 'silent' });
const STREAM = '/v1/vision/tasks/t1/results/stream';

describe('an event stream through the gateway', () => {
  let gw: RunningGateway;
  let server: http.Server;
  /** Ends the upstream's open stream. */
  let finish: () => void = () => undefined;

  beforeAll(async () => {
    const app = createServiceApp(
      { name: 'sse', audience: ['tasks', 'quota', 'results', 'images'], logger, identity: verifierOfAll() },
      (a) => {
        a.get(STREAM, (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'x-accel-buffering': 'no' });
          res.write('event: frame\nid: c0\ndata: {}\n\n');
          finish = () => res.end('event: end\ndata: {}\n\n');
        });
        a.get('/{*any}', (_req, res) => res.json({ ok: true }));
      },
    );
    server = await listen(app, 0, '127.0.0.1');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await start({
      env: {
        VISION_DATA_DIR: ':memory:',
        VISION_IDENTITY_DIR: identityDir(),
        LOG_LEVEL: 'silent',
        VISION_API_KEYS: `${KEY}:sse`,
        GATEWAY_CONCURRENCY: '1',
        TASKS_URL: url,
        RESULTS_URL: url,
        QUOTA_URL: url,
        IMAGES_URL: url,
      },
      port: 0,
      host: '127.0.0.1',
      logger,
    });
  });
  afterAll(async () => {
    await gw.close();
    await closeServer(server);
  });

  it('relays each event as it is written, and the open stream holds a concurrency slot until it ends', async () => {
    const headers = { authorization: `Bearer ${KEY}` };
    const res = await fetch(`${gw.url}${STREAM}`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const reader = res.body!.getReader();
    // The first event arrives while the upstream still holds the response open.
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('id: c0');

    const second = await fetch(`${gw.url}/v1/vision/quota`, { headers });
    expect(second.status).toBe(429);
    await second.text();

    finish();
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toContain('event: end');
    const after = await fetch(`${gw.url}/v1/vision/quota`, { headers });
    expect(after.status).toBe(200);
    await after.text();
  });
});
