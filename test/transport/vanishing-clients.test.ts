import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { standaloneOnly } from '../helpers/composition';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { streamServer, streamUrls } from '../helpers/stream-servers';
import { storedObjects } from '../helpers/stored-objects';
import { fatalErrors, openConnections, openTemporaryFiles, servicePort } from './processes';
import { eventually, head, imageForm, quotaOf, rawClient, serving, sleep, type RawClient } from './support';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const KEY = 'transport-vanish-0123456789';
const MiB = 1024 * 1024;
const CLIP = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv.mp4');
/** A head that never completed reaches no service: only the gateway's server held the connection. */
const atTheGateway = standaloneOnly(
  'the gateway answers or closes the connection before it forwards anything',
);

/** A multipart video body of `fileBytes` (a real clip's bytes first, padded), with the scene field. */
function videoForm(fileBytes: number): { contentType: string; body: Buffer } {
  const boundary = 'transport-video-3c9a';
  const clip = readFileSync(CLIP);
  const file = Buffer.alloc(fileBytes);
  clip.copy(file, 0, 0, Math.min(clip.length, fileBytes));
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="scene_code"\r\n\r\nperson_vehicle\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="v.mp4"\r\nContent-Type: video/mp4\r\n\r\n`,
      ),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
  };
}

/**
 * A client that vanishes at any point — during the head, mid-body, after its answer began, or halfway
 * through a 512 MB upload — leaves nothing behind: no task, no charge or hold, no stored object or
 * temporary file, no descriptor held open for its connection or for the call it started; and the
 * service serves on. In both modes: the distributed suite reads the service processes' descriptors.
 */
describe('transport: clients that vanish leave nothing behind', () => {
  let stack: TestStack;
  let quotaBefore: unknown;
  let objectsBefore: string[];
  let gatewayPort: number;
  beforeAll(async () => {
    stack = await startStack({ keys: `${KEY}:transport-vanish`, env: { TASKS_POLL_INTERVAL_MS: '300' } });
    quotaBefore = await quotaOf(stack, KEY);
    objectsBefore = await storedObjects(stack);
    gatewayPort = Number(new URL(stack.url).port);
  }, 120_000);
  afterAll(async () => {
    if (!stack) return;
    expect(await fatalErrors(stack)).toEqual({ count: 0, exited: [] });
    await stack.close();
  });

  /** Destroys the client's connection; resolves with its local port (the server's remote one). */
  const vanish = (c: RawClient): number => {
    const port = c.socket.localPort ?? 0;
    c.socket.destroy();
    return port;
  };

  /** No process serving the stack holds a descriptor for the client's connection, or to `upstream`. */
  const noConnectionsLeft = async (clientPort: number, upstream?: 'images' | 'results' | 'tasks') => {
    expect(
      await eventually(
        () => openConnections(stack, { local: gatewayPort, remote: clientPort }),
        (held) => held.length === 0,
      ),
    ).toEqual([]);
    // The gateway's pooled upstream connections close after 4 s idle; one the call still used would not.
    if (upstream)
      expect(
        await eventually(
          () => openConnections(stack, { remote: servicePort(stack, upstream) }),
          (held) => held.length === 0,
          15_000,
        ),
      ).toEqual([]);
  };

  /** What must hold after each vanished client, once the services have noticed. */
  const nothingLeft = async (clientPort: number, upstream?: 'images' | 'results' | 'tasks') => {
    expect(
      await eventually(
        () => quotaOf(stack, KEY),
        (q) => JSON.stringify(q) === JSON.stringify(quotaBefore),
      ),
    ).toEqual(quotaBefore);
    const tasks = await stack.api('GET', '/v1/vision/tasks', { key: KEY });
    expect(tasks.status).toBe(200);
    expect(tasks.body.items).toEqual([]);
    expect(
      await eventually(
        () => storedObjects(stack),
        (o) => o.length === objectsBefore.length,
      ),
    ).toEqual(objectsBefore);
    expect(
      await eventually(
        () => openTemporaryFiles(stack),
        (f) => f.length === 0,
      ),
    ).toEqual([]);
    await noConnectionsLeft(clientPort, upstream);
    expect(await serving(stack, KEY)).toBe(true);
  };

  atTheGateway.it('during the head', async () => {
    const c = await rawClient(stack.url);
    await c.write(
      `POST /v1/vision/image-detections HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${KEY}\r\nIdempot`,
    );
    await sleep(100);
    await nothingLeft(vanish(c));
  });

  it('in the middle of an image upload', async () => {
    const { contentType, body } = imageForm(4 * MiB, 'person_vehicle');
    const c = await rawClient(stack.url);
    await c.write(
      head('/v1/vision/image-detections', {
        authorization: `Bearer ${KEY}`,
        'idempotency-key': randomUUID(),
        'content-type': contentType,
        'content-length': body.length,
      }),
    );
    await c.write(body.subarray(0, 2 * MiB));
    await sleep(200);
    await nothingLeft(vanish(c), 'images');
  }, 60_000);

  it('halfway through a 512 MB video upload', async () => {
    const { contentType, body } = videoForm(512 * 1000 * 1000);
    const c = await rawClient(stack.url);
    await c.write(
      head('/v1/vision/video-tasks', {
        authorization: `Bearer ${KEY}`,
        'idempotency-key': randomUUID(),
        'content-type': contentType,
        'content-length': body.length,
      }),
    );
    for (let sent = 0; sent < body.length / 2; sent += 8 * MiB)
      await c.write(body.subarray(sent, sent + 8 * MiB));
    await nothingLeft(vanish(c), 'tasks');
  }, 120_000);

  // Last: this case creates a task (its own, charged as any task is). A live stream task: it runs until it is
  // stopped, so the cut stream is closed while the task runs, however fast the machine decodes.
  it('in the middle of its answer: a results stream cut while the task runs', async () => {
    const rtsp = await streamServer('rtsp');
    await rtsp.start();
    const created = await stack.api('POST', '/v1/vision/tasks', {
      key: KEY,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: streamUrls(rtsp).rtsp }),
    });
    expect(created.status).toBe(201);
    const taskId = created.body.task_id as string;

    const c = await rawClient(stack.url);
    await c.write(
      `GET /v1/vision/tasks/${taskId}/results/stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${KEY}\r\n\r\n`,
    );
    // The answer has begun: its head and a first frame event came; the stream goes on until the task ends.
    let text = '';
    await new Promise<void>((resolve) => {
      const onData = (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (/\r\n\r\n[\s\S]*event: frame/.test(text)) {
          c.socket.off('data', onData);
          resolve();
        }
      };
      c.socket.on('data', onData);
    });
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toMatch(/content-type: text\/event-stream/i);
    c.socket.pause();
    const clientPort = vanish(c);
    // The stream the gateway relayed is closed with the client's connection, while the task (an 80 s
    // clip) still runs: a stream left open would last until its last frame.
    await noConnectionsLeft(clientPort, 'results');
    const running = await stack.api('GET', `/v1/vision/tasks/${taskId}`, { key: KEY });
    expect(running.body.status).toBe('running');

    // Stopped, the task leaves no hold; it is the only task, and nothing new is stored.
    expect((await stack.api('POST', `/v1/vision/tasks/${taskId}/stop`, { key: KEY })).status).toBe(200);
    const done = await eventually(
      () => stack.api('GET', `/v1/vision/tasks/${taskId}`, { key: KEY }),
      (r) => ['succeeded', 'failed', 'stopped', 'refunded'].includes(r.body.status as string),
      60_000,
    );
    expect(done.body.status).toBe('stopped');
    const quota = (await quotaOf(stack, KEY)) as Record<string, { held: number }>;
    expect(Object.values(quota).map((q) => q.held)).toEqual(Object.values(quota).map(() => 0));
    const tasks = await stack.api('GET', '/v1/vision/tasks', { key: KEY });
    expect(tasks.body.items.map((t: { task_id: string }) => t.task_id)).toEqual([taskId]);
    const objects = await storedObjects(stack);
    expect(objects.filter((o) => !objectsBefore.includes(o))).toEqual([]);
    expect(objects.filter((o) => o.startsWith('incomplete:') || o.endsWith('.partial'))).toEqual([]);
    expect(
      await eventually(
        () => openTemporaryFiles(stack),
        (f) => f.length === 0,
      ),
    ).toEqual([]);
    expect(await serving(stack, KEY)).toBe(true);
    await rtsp.stop();
  }, 150_000);
});
