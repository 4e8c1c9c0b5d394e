/**
 * `vision webhooks …` spawned as a process against the standalone stack, with a receiver on loopback that
 * checks every request with the `standardwebhooks` package: usage errors, the registration (secret printed
 * once), list/get/rotate, the delivery log of a refused event, its redelivery and the delete.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from '@vision/sdk';
import type { Receiver, Received } from '../../../services/results/test/webhook-receiver';
import { MEDIA, type TestStack } from '../../../test/helpers/stack';
import { DEAD_IN_TWO_SECONDS, startWebhookStack, until } from '../../../test/helpers/webhooks';
import { runVision } from './support/vision-process';

const KEY = 'cli-hooks-key-0123456789';
const IMAGE = path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg');
const EVENT = 'vision.image_detection.completed';

describe('vision webhooks, spawned as a process, against the standalone stack', () => {
  let stack: TestStack;
  let rx: Receiver;
  /** What the receiver answers: the verification, then every event. */
  let verification = 204;
  let events = 500;
  const vision = (args: string[]) =>
    runVision(['webhooks', ...args], { VISION_BASE_URL: stack.url, VISION_API_KEY: KEY });

  beforeAll(async () => {
    if (!existsSync(path.resolve(__dirname, '../dist/main.js')))
      throw new Error('packages/cli is not built: run `npm run build` first');
    ({ stack, rx } = await startWebhookStack({
      keys: `${KEY}:cli-hooked`,
      env: DEAD_IN_TWO_SECONDS,
      answer: (r: Received) => ({
        status: r.body.includes('"vision.webhook.verification"') ? verification : events,
      }),
    }));
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await rx?.close();
  });

  it('answers --help and refuses bad arguments with exit 2, before sending anything', async () => {
    for (const sub of ['', 'create', 'list', 'get', 'rotate', 'delete', 'deliveries', 'redeliver']) {
      const r = await vision([...(sub ? [sub] : []), '--help']);
      expect([sub, r.code]).toEqual([sub, 0]);
      expect(r.stdout).toContain(`Usage: vision webhooks${sub ? ` ${sub}` : ''}`);
    }
    const refused: [string[], RegExp][] = [
      [['create', '--url', 'ftp://example.com/x', '--event', EVENT], /http or https/],
      [['create', '--url', 'not a url', '--event', EVENT], /not a URL/],
      [['create', '--url', 'https://u:p@example.com/', '--event', EVENT], /user or password/],
      [['create', '--url', 'https://example.com/'], /--event/],
      [['create', '--url', 'https://example.com/', '--event', 'vision.everything'], /Allowed choices/],
      [
        ['create', '--url', 'https://example.com/', '--event', EVENT, '--description', 'x'.repeat(201)],
        /200/,
      ],
      [['get', 'a/b'], /endpoint_id/],
      [['rotate', 'x'.repeat(65)], /endpoint_id/],
      [['deliveries', 'ep_1', '--status', 'lost'], /Allowed choices/],
      [['deliveries', 'ep_1', '--limit', '0'], /--limit/],
      [['deliveries', 'ep_1', '--page-size', '101'], /--page-size/],
      [['deliveries', 'ep_1', 'd1', '--status', 'dead'], /leave them out/],
      [['redeliver', 'ep_1'], /delivery_id/],
    ];
    for (const [args, message] of refused) {
      const r = await vision(args);
      expect([args, r.code, r.stderr]).toEqual([args, 2, expect.stringMatching(message)]);
    }
    expect(rx.received).toEqual([]);
  }, 60_000);

  it('create, list, get, rotate, deliveries, redeliver and delete', async () => {
    // A receiver that fails the verification: nothing is stored, exit 1 with the reason.
    verification = 500;
    const failed = await vision(['create', '--url', rx.url, '--event', EVENT]);
    expect([failed.code, failed.stderr]).toEqual([1, expect.stringContaining('webhook_verification_failed')]);
    verification = 204;

    const r = await vision(['create', '--url', rx.url, '--event', EVENT, '--description', 'cli', '--json']);
    expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('shown only now')]);
    const created = JSON.parse(r.stdout) as WebhookEndpointWithSecret;
    expect(created).toMatchObject({ url: rx.url, event_types: [EVENT], description: 'cli' });
    const check = rx.received[rx.received.length - 1];
    expect(new Webhook(created.secret).verify(check.body, toFlat(check))).toMatchObject({
      type: 'vision.webhook.verification',
      data: { endpoint_id: created.endpoint_id },
    });
    const id = created.endpoint_id;

    const plain = await vision([
      'create',
      '--url',
      `${rx.url}/b`,
      '--event',
      EVENT,
      'vision.quota.exhausted',
    ]);
    expect(plain.code).toBe(0);
    const second = /^endpoint_id\s+(\S+)$/m.exec(plain.stdout)?.[1];
    expect(plain.stdout).toMatch(/^secret\s+whsec_\S+$/m);
    expect(plain.stdout).toMatch(
      /^event_types\s+vision\.image_detection\.completed, vision\.quota\.exhausted$/m,
    );

    const lines = (await vision(['list'])).stdout.trimEnd().split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual([id, second]);
    expect(lines[0]).toMatch(
      / enabled +http:\/\/127\.0\.0\.1:\d+\/hook {2}vision\.image_detection\.completed$/,
    );
    const listed = await vision(['list', '--json']);
    expect((JSON.parse(listed.stdout) as WebhookEndpoint[]).map((e) => e.endpoint_id)).toEqual([id, second]);
    expect(listed.stdout).not.toContain('whsec_');
    const got = await vision(['get', id]);
    expect(got.stdout).toMatch(/^status\s+enabled$/m);
    expect(got.stdout).not.toMatch(/secret/);

    const rotated = await vision(['rotate', id, '--json']);
    expect([rotated.code, rotated.stderr]).toEqual([0, expect.stringContaining('shown only now')]);
    const secret = (JSON.parse(rotated.stdout) as WebhookEndpointWithSecret).secret;
    expect(secret).not.toBe(created.secret);

    // Three image calls' events, refused by the receiver until each delivery is dead.
    for (let i = 0; i < 3; i++) {
      const detect = await runVision(['detect', IMAGE, '--scene', 'person_vehicle'], {
        VISION_BASE_URL: stack.url,
        VISION_API_KEY: KEY,
      });
      expect(detect.code).toBe(0);
    }
    const jsonLines = (out: string) =>
      out
        .trim()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as WebhookDelivery);
    const logged = await until('three dead deliveries', async () => {
      const log = jsonLines((await vision(['deliveries', id, '--status', 'dead', '--json'])).stdout);
      return log.length === 3 ? log : undefined;
    });
    // Page after page (one delivery each), or up to --limit: the same log, newest first.
    const paged = jsonLines((await vision(['deliveries', id, '--page-size', '1', '--json'])).stdout);
    expect(paged.map((d) => d.delivery_id)).toEqual(logged.map((d) => d.delivery_id));
    const two = jsonLines(
      (await vision(['deliveries', id, '--page-size', '1', '--limit', '2', '--json'])).stdout,
    );
    expect(two.map((d) => d.delivery_id)).toEqual(logged.slice(0, 2).map((d) => d.delivery_id));
    const dead = logged[0];
    const log = await vision(['deliveries', id]);
    expect(log.stdout.trimEnd().split('\n')).toEqual(
      logged.map((d) =>
        expect.stringMatching(
          new RegExp(`^${d.delivery_id} +dead +${EVENT} +attempts ${d.attempts} +last http_error 500 `),
        ),
      ),
    );
    const detail = await vision(['deliveries', id, dead.delivery_id]);
    expect(detail.stdout).toMatch(/^status\s+dead$/m);
    expect(detail.stdout.match(/^attempt \d+ .* http_error 500 {2}\d+ ms$/gm)).toHaveLength(dead.attempts);

    events = 204;
    const since = rx.received.length;
    const again = await vision(['redeliver', id, dead.delivery_id, '--json']);
    expect([again.code, (JSON.parse(again.stdout) as WebhookDelivery).status]).toEqual([0, 'pending']);
    const sent = await until('the redelivery', () =>
      rx.received.slice(since).find((x) => x.headers['webhook-id'] === dead.delivery_id),
    );
    // Signed with the new secret and, while the rotation overlaps, the old one.
    for (const s of [secret, created.secret])
      expect(new Webhook(s).verify(sent.body, toFlat(sent))).toMatchObject({
        id: dead.delivery_id,
        type: EVENT,
      });
    await until(
      'the delivery to be delivered',
      async () =>
        (await vision(['deliveries', id, dead.delivery_id])).stdout.match(/^status\s+delivered$/m) ??
        undefined,
    );
    const twice = await vision(['redeliver', id, dead.delivery_id]);
    expect([twice.code, twice.stderr]).toEqual([1, expect.stringContaining('delivery_not_dead')]);

    const deleted = await vision(['delete', id]);
    expect([deleted.code, deleted.stderr]).toEqual([0, `deleted ${id}\n`]);
    const missing = await vision(['get', id]);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringMatching(/OP-NOT-FOUND.*request id/)]);
    expect((await vision(['list'])).stdout.trim().split('\n')).toEqual([
      expect.stringContaining(String(second)),
    ]);
  }, 120_000);
});

function toFlat(r: Received): Record<string, string> {
  return Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
}
