/**
 * An event stream whose client stopped reading: once every buffer towards the client is full and it takes
 * nothing for GATEWAY_STREAM_STALL_MS, the gateway closes the stream, towards the client and the upstream, and
 * the subject's concurrency slot is free again (docs/CONNECTIONS.md, "Streams whose reader stopped reading").
 */
import type http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { closeServer, createLogger, createServiceApp, listen } from '@vision/shared';
import { start, type RunningGateway } from '../src/index';
import { identityDir, verifierOfAll } from '../../../test/helpers/identity';

const KEY = 'key-stall-aaaaaaaa';
const logger = createLogger('test', { level: 'silent' });
const STREAM = '/v1/vision/tasks/t1/events/stream';
const CHUNK = `event: zone_event\ndata: ${'x'.repeat(64 * 1024)}\n\n`;

let gw: RunningGateway;
let server: http.Server;
let upstreamClosed = false;
const sockets: net.Socket[] = [];

beforeAll(async () => {
  const app = createServiceApp(
    { name: 'sse', audience: ['tasks', 'quota', 'results', 'images'], logger, identity: verifierOfAll() },
    (a) => {
      a.get(STREAM, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.on('close', () => (upstreamClosed = true));
        // Events as fast as the gateway takes them, for as long as the stream is open.
        const pump = () => {
          while (!res.destroyed && res.write(CHUNK));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
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
      VISION_API_KEYS: `${KEY}:stall`,
      GATEWAY_CONCURRENCY: '1',
      GATEWAY_STREAM_STALL_MS: '300',
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
  for (const s of sockets) s.destroy();
  await gw.close();
  await closeServer(server);
});

test('a client that stopped reading loses its stream; its concurrency slot is free again', async () => {
  const { port } = new URL(gw.url);
  const client = net.connect(Number(port), '127.0.0.1');
  sockets.push(client);
  await once(client, 'connect');
  client.write(`GET ${STREAM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`);
  // It reads nothing, ever.
  client.pause();

  const headers = { authorization: `Bearer ${KEY}` };
  const quota = async () => {
    const r = await fetch(`${gw.url}/v1/vision/quota`, { headers });
    await r.text();
    return r.status;
  };
  // While the stream is open it holds the subject's one slot.
  await new Promise((r) => setTimeout(r, 100));
  expect(await quota()).toBe(429);
  const deadline = Date.now() + 20_000;
  let status = 429;
  while (status !== 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    status = await quota();
  }
  expect(status).toBe(200);
  expect(upstreamClosed).toBe(true);
});
