import { REASON } from '@vision/shared';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { IDENTITY_HEADER, identityHeader, imagesQuotaOf, media, startStack, type Stack } from './harness';
import { keepClearOfQuotaDayTurn } from '../../../test/helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

jest.setTimeout(60_000);

const PATH = '/v1/vision/image-detections';
const JPG = 'sheep_coco5992.jpg';
const PNG = 'boat_sailboat_kodim06.png';

// The fake inference answers one `boat` per image, box [0.375, 0.375, 0.625, 0.625]: its bottom-center
// anchor is (0.5, 0.625), its center (0.5, 0.5).
const ZONES = [
  {
    id: 'bay',
    polygon: [
      [0.4, 0.55],
      [0.6, 0.55],
      [0.6, 0.7],
      [0.4, 0.7],
    ],
  },
  {
    id: 'corner',
    name: 'Top left',
    polygon: [
      [0, 0],
      [0.3, 0],
      [0, 0.3],
    ],
  },
  {
    id: 'centre',
    anchor: 'center',
    polygon: [
      [0.4, 0.55],
      [0.6, 0.55],
      [0.6, 0.7],
      [0.4, 0.7],
    ],
  },
  {
    id: 'people',
    labels: ['person'],
    polygon: [
      [0.4, 0.55],
      [0.6, 0.55],
      [0.6, 0.7],
      [0.4, 0.7],
    ],
  },
  // Half of this zone lies under the box.
  {
    id: 'smoke',
    coverage: 0.4,
    polygon: [
      [0.375, 0.5],
      [0.625, 0.5],
      [0.625, 0.75],
      [0.375, 0.75],
    ],
  },
];

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ inference: 'fake' });
});
afterAll(async () => {
  await stack?.close();
});

function post(subject: string, key: string, zones?: string): request.Test {
  let r = request(stack.images.url)
    .post(PATH)
    .set(IDENTITY_HEADER, identityHeader(subject))
    .set('Idempotency-Key', key)
    .field('scene_code', 'ship');
  if (zones !== undefined) r = r.field('zones', zones);
  return r.attach('files', media(JPG), JPG).attach('files', media(PNG), PNG);
}

function expectInvalid(r: request.Response, reason: string, field?: string): void {
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
  expect(r.body.error.details.reason).toBe(reason);
  if (field !== undefined) expect(r.body.error.details.field).toBe(field);
}

describe('image detections with zones', () => {
  it('answers per image the counts per zone, in the zones order, and replays them as stored', async () => {
    const key = randomUUID();
    const first = await post('zones', key, JSON.stringify(ZONES));
    expect(first.status).toBe(201);
    expect(first.body.results).toHaveLength(2);
    for (const r of first.body.results) {
      expect(r.status).toBe('succeeded');
      expect(r.zones).toEqual([
        { zone_id: 'bay', counts: { boat: 1, '*': 1 } },
        { zone_id: 'corner', counts: { '*': 0 } },
        { zone_id: 'centre', counts: { '*': 0 } },
        { zone_id: 'people', counts: { '*': 0 } },
        { zone_id: 'smoke', counts: { boat: 1, '*': 1 }, coverage: { fraction: 0.5, triggered: true } },
      ]);
    }
    const again = await post('zones', key, JSON.stringify(ZONES));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, replayed: true });
    // Other zones under the same key are another request.
    expectInvalid(await post('zones', key, JSON.stringify(ZONES.slice(1))), 'idempotency_mismatch');
    expectInvalid(await post('zones', key), 'idempotency_mismatch');
    expect((await imagesQuotaOf(stack, 'zones')).used).toBe(2);
  });

  it('answers no zones when the call carries none (absent or an empty array)', async () => {
    for (const zones of [undefined, '[]']) {
      const r = await post('no-zones', randomUUID(), zones);
      expect(r.status).toBe(201);
      for (const x of r.body.results) expect(x).not.toHaveProperty('zones');
    }
  });

  it('refuses invalid zones with the rules validation of video tasks, before charging or storing anything', async () => {
    const subject = 'bad-zones';
    const bowtie = [
      {
        id: 'z',
        polygon: [
          [0, 0],
          [1, 1],
          [1, 0],
          [0, 1],
        ],
      },
    ];
    expectInvalid(
      await post(subject, randomUUID(), JSON.stringify(bowtie)),
      REASON.invalid_field,
      'zones.0.polygon',
    );
    const outside = [
      {
        id: 'z',
        polygon: [
          [0, 0],
          [1.5, 0],
          [0, 1],
        ],
      },
    ];
    expectInvalid(await post(subject, randomUUID(), JSON.stringify(outside)), REASON.invalid_field);
    expectInvalid(await post(subject, randomUUID(), '{not json'), REASON.invalid_field, 'zones');
    expectInvalid(
      await post(subject, randomUUID(), JSON.stringify({ id: 'z' })),
      REASON.invalid_field,
      'zones',
    );
    const many = Array.from({ length: 21 }, (_, i) => ({ ...ZONES[0], id: `z${i}` }));
    expectInvalid(await post(subject, randomUUID(), JSON.stringify(many)), REASON.invalid_field, 'zones');
    const extra = [{ ...ZONES[0], colour: 'red' }];
    expectInvalid(await post(subject, randomUUID(), JSON.stringify(extra)), REASON.unknown_field);
    const tooLong = await post(subject, randomUUID(), ' '.repeat(65537));
    expectInvalid(tooLong, REASON.field_too_large, undefined);
    expect((await imagesQuotaOf(stack, subject)).used).toBe(0);
  });
});
