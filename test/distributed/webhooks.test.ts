/**
 * Webhooks on the distributed deployment: events leave tasks and quota through their outboxes and Kafka,
 * two results replicas dispatch from one Postgres table, and a dispatcher killed mid-attempt leaves its
 * lease to lapse: the delivery is sent again with the same webhook-id, and no attempt runs twice at once.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Receiver } from '../../services/results/test/webhook-receiver';
import type { DistributedStack } from '../helpers/distributed';
import { MEDIA } from '../helpers/stack';
import { describeDistributed, KEY, startFaultStack, waitFor } from './support';

describeDistributed('webhooks with two results replicas on Kafka and Postgres', () => {
  let stack: DistributedStack;
  let rx: Receiver;
  /** Requests in flight per webhook-id right now, and the most ever seen at once. */
  beforeAll(async () => {
    rx = await new Receiver().start();
    stack = await startFaultStack({
      replicas: { results: 2 },
      env: {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        RESULTS_WEBHOOK_RETRY_BASE_MS: '200',
        RESULTS_WEBHOOK_RETRY_MAX_MS: '1000',
        RESULTS_WEBHOOK_POLL_MS: '100',
        // Long enough that an attempt the receiver holds is still in flight when the test kills its sender.
        RESULTS_WEBHOOK_TIMEOUT_MS: '20000',
        RESULTS_WEBHOOK_CONCURRENCY: '4',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await rx?.close();
  });

  async function register(types: string[]) {
    const r = await stack.api('POST', '/v1/vision/webhooks', {
      key: KEY,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: rx.url, event_types: types }),
    });
    expect(r.status).toBe(201);
    rx.secrets = [r.body.secret];
    return r.body.endpoint_id as string;
  }

  async function detect(): Promise<string> {
    const form = new FormData();
    form.append(
      'files',
      new Blob([readFileSync(path.join(MEDIA, 'images', 'none_bedroom_coco632.jpg'))]),
      'a.jpg',
    );
    const r = await stack.api('POST', '/v1/vision/image-detections', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(r.status).toBe(201);
    return r.body.task_id as string;
  }

  it('a receiver down then back gets every event once after dedup; replicas never send one delivery at once', async () => {
    const endpointId = await register(['vision.image_detection.completed']);
    let down = true;
    // Each answer takes 150 ms, so a second replica sending the same delivery meanwhile would overlap it.
    rx.answer = () => (down ? { status: 503, delayMs: 150 } : { status: 200, delayMs: 150 });
    const tasks: string[] = [];
    for (let i = 0; i < 8; i++) tasks.push(await detect());
    // Down until every task's event has arrived (and been refused) at least once: each delivery then needs
    // a retry, whenever its task's call ended.
    const seen = () => new Set(rx.events().map((e) => e.subject));
    await waitFor(
      'a refused attempt for every task',
      async () => (tasks.every((t) => seen().has(t)) ? true : undefined),
      60_000,
    );
    down = false;
    const log = await waitFor(
      'every delivery delivered',
      async () => {
        const r = await stack.api('GET', `/v1/vision/webhooks/${endpointId}/deliveries?limit=100`, {
          key: KEY,
        });
        const items = r.body.items as { status: string; attempts: number }[];
        return items.length >= tasks.length && items.every((d) => d.status === 'delivered')
          ? items
          : undefined;
      },
      60_000,
    );
    expect(
      rx
        .events()
        .map((e) => e.subject)
        .sort(),
    ).toEqual([...tasks].sort());
    expect(rx.overlap).toBe(1);
    expect(log).toHaveLength(tasks.length);
    expect(log.every((d) => d.attempts >= 2)).toBe(true);
    await stack.api('DELETE', `/v1/vision/webhooks/${endpointId}`, { key: KEY });
  }, 180_000);

  it('a dispatcher killed mid-attempt: after its lease lapses the delivery is sent again with the same webhook-id', async () => {
    // A receiver of its own: the previous endpoint (same events, another secret) may still exist.
    await rx.close();
    rx = await new Receiver().start();
    const endpointId = await register(['vision.image_detection.completed']);
    // The first attempt is held (not answered) until both senders are dead.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let hold = true;
    rx.answer = () => (hold ? { status: 200, until: held } : { status: 200 });
    const taskId = await detect();
    await waitFor(
      'the first attempt',
      async () => (rx.events().some((e) => e.subject === taskId) ? true : undefined),
      60_000,
    );
    // The attempt is in flight in one of the replicas: both die before it gets its answer.
    await Promise.all([stack.kill('results', { index: 0 }), stack.kill('results', { index: 1 })]);
    hold = false;
    release();
    // Its sender died with it in flight: the connection was cut before any answer.
    const firstId = rx.events().find((e) => e.subject === taskId)!.id;
    await waitFor(
      'the held attempt cut by its sender',
      async () => (rx.cut.some((r) => r.id === firstId) ? true : undefined),
      10_000,
    );
    await Promise.all([stack.restart('results', { index: 0 }), stack.restart('results', { index: 1 })]);
    const id = rx.events().find((e) => e.subject === taskId)!.id;
    await waitFor(
      'the attempt again, after the lease',
      async () => (rx.received.filter((r) => r.id === id).length >= 2 ? true : undefined),
      90_000,
    );
    await waitFor(
      'delivered in the log',
      async () => {
        const d = await stack.api('GET', `/v1/vision/webhooks/${endpointId}/deliveries/${id}`, { key: KEY });
        return d.body.status === 'delivered' ? d.body : undefined;
      },
      30_000,
    );
    const d = await stack.api('GET', `/v1/vision/webhooks/${endpointId}/deliveries/${id}`, { key: KEY });
    expect(d.body.attempts).toBeGreaterThanOrEqual(2);
    expect(new Set(rx.received.filter((r) => r.id === id).map((r) => r.verified))).toEqual(new Set([true]));
  }, 240_000);
});
