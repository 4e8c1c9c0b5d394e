/**
 * A results stream whose reader stopped reading: once the buffers towards it are full and it takes nothing for
 * RESULTS_STREAM_STALL_MS, the results service closes the stream (docs/CONNECTIONS.md, "Streams whose reader
 * stopped reading"). The reader, when it reads again, gets what the buffers held and then the end of the
 * connection, although the task still runs and would have streamed on.
 */
import { once } from 'node:events';
import net from 'node:net';
import { IDENTITY_HEADER } from '@vision/shared';
import type { StoredFrame } from '../src/domain/frames';
import { signFor } from '../../../test/helpers/identity';
import { logger } from './helpers';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';

jest.setTimeout(120_000);

let h: WebhookHarness;
const sockets: net.Socket[] = [];

beforeAll(async () => {
  h = await startWebhookHarness({ RESULTS_STREAM_POLL_MS: '20', RESULTS_STREAM_STALL_MS: '300' });
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await h.close();
});

const TASK = 'stalled-reader';
const FRAMES = 4000;
/** About 5 KB of events per frame: 20 MB in all, more than the buffers between the service and a reader. */
const frame = (seq: number): StoredFrame => ({
  taskId: TASK,
  seq,
  frameId: `f${seq}`,
  frameTimeMs: seq * 200,
  width: 640,
  height: 480,
  objects: Array.from({ length: 50 }, (_, i) => ({
    l: 'person',
    s: 0.9,
    b: [0.01 * (i % 90), 0.5, 0.05, 0.1],
    t: `track-${i}`,
  })),
});

test('a reader that takes nothing loses its stream; reading again, it gets the buffered part and the end', async () => {
  await h.taskEvent(TASK, 'running');
  for (let from = 0; from < FRAMES; from += 500)
    await h.svc.frames.insert(Array.from({ length: 500 }, (_, i) => frame(from + i)));

  const path = `/v1/vision/tasks/${TASK}/results/stream?limit=500&min_score=0`;
  const identity = signFor({ subject: 'alice', requestId: 'stalled-1' }, 'results', {
    method: 'GET',
    target: path,
  });
  const { port } = new URL(h.svc.url);
  const client = net.connect(Number(port), '127.0.0.1');
  sockets.push(client);
  await once(client, 'connect');
  client.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${IDENTITY_HEADER}: ${identity}\r\n\r\n`);
  client.pause();
  // The service fills every buffer towards the reader, finds it stalled and closes the stream.
  const info = jest.spyOn(logger, 'info');
  const closing = () =>
    info.mock.calls.some((c) => c.includes('closing a stream whose reader stopped reading'));
  try {
    await waitFor('the stream closed for its stalled reader', async () => closing(), 30_000);
  } finally {
    info.mockRestore();
  }

  let head = '';
  let ids = 0;
  client.on('data', (chunk: Buffer) => {
    head ||= chunk.toString('latin1').slice(0, 200);
    ids += chunk.toString('latin1').split('\nid: ').length - 1;
  });
  const ended = new Promise<boolean>((resolve) => {
    client.once('close', () => resolve(true));
    setTimeout(() => resolve(false), 10_000);
  });
  client.resume();
  expect(await ended).toBe(true);
  expect(head).toMatch(/^HTTP\/1\.1 200 .*text\/event-stream/s);
  expect(ids).toBeGreaterThan(0);
  // Cut before the task's stored frames were all sent (and it runs on: nothing else would end the stream).
  expect(ids).toBeLessThan(FRAMES);
});
