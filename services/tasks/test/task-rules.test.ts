import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { TOPICS, type IncomingMessage, REASON } from '@vision/shared';
import { heaviestRules } from '../../../test/helpers/places';
import { MP4, type Stack, startClipServer, startStack, waitFor } from './harness';

let stack: Stack;
let clips: Awaited<ReturnType<typeof startClipServer>>;
const events: IncomingMessage[] = [];

beforeAll(async () => {
  clips = await startClipServer();
  stack = await startStack({ env: { TASKS_MAX_ACTIVE: '10' }, quotaDaily: 6 });
  await stack.bus.subscribe({
    topic: TOPICS.taskEvents,
    group: 'test',
    fromBeginning: true,
    handleBatch: async (m) => {
      events.push(...m);
    },
  });
});
afterAll(async () => {
  await stack.close();
  await clips.close();
});

const SQUARE = [
  [0.2, 0.2],
  [0.8, 0.2],
  [0.8, 0.8],
  [0.2, 0.8],
];
const zone = { id: 'bay', polygon: SQUARE, labels: ['car'] };
const line = { id: 'gate', start: [0.1, 0.5], end: [0.9, 0.5] };

const createStream = (subject: string, body: object, key = randomUUID()) =>
  stack.http.post('/v1/vision/tasks').use(stack.as(subject)).set('Idempotency-Key', key).send(body);
const streamBody = (extra: object) => ({
  scene_code: 'person_vehicle',
  stream_url: clips.url('person_bicycle_car_parkinglot_intel.mp4'),
  ...extra,
});
const putRules = (subject: string, id: string, body: unknown) =>
  stack.http
    .put(`/v1/vision/tasks/${id}/rules`)
    .use(stack.as(subject))
    .send(body as object);
const eventsOf = (id: string) =>
  events.filter((e) => e.key === id).map((e) => e.value as Record<string, unknown>);

/** The largest rule set the API accepts, and one label more. */
function overLimit(): { zones: Record<string, unknown>[] } {
  const { zones } = heaviestRules(['car']);
  zones[0] = { ...zones[0], labels: [...(zones[0].labels as string[]), 'x'.repeat(200)] };
  return { zones };
}

describe('zones and lines on video tasks', () => {
  test('a stream task takes rules at creation (version 1), announced with its first event', async () => {
    const r = await createStream('alice', streamBody({ zones: [zone], lines: [line] }));
    expect(r.status).toBe(201);
    expect(r.body.rules_version).toBe(1);
    const got = await stack.http.get(`/v1/vision/tasks/${r.body.task_id}/rules`).use(stack.as('alice'));
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ task_id: r.body.task_id, rules_version: 1 });
    expect(got.body.zones[0]).toMatchObject({
      id: 'bay',
      anchor: 'bottom_center',
      enter_ms: 0,
      labels: ['car'],
    });
    expect(got.body.lines[0]).toMatchObject({ id: 'gate', hysteresis_ms: 0 });
    expect(typeof got.body.updated_at).toBe('string');
    const created = await waitFor(async () =>
      eventsOf(r.body.task_id).find((e) => e.type === 'task.created'),
    );
    expect(created).toMatchObject({
      rules_version: 1,
      rules: { zones: [{ id: 'bay' }], lines: [{ id: 'gate' }] },
    });
  });

  test('a task with rules asks its job to keep recent frames for the pictures of events; one without does not', async () => {
    const withRules = await createStream('alice', streamBody({ lines: [line] }));
    const without = await createStream('alice', streamBody({}));
    expect([withRules.status, without.status]).toEqual([201, 201]);
    expect(stack.inference.jobs.get(withRules.body.task_id)?.keep_frames).toBe(true);
    expect(stack.inference.jobs.get(without.body.task_id)?.keep_frames).toBe(false);
  });

  test('PUT replaces the rules: a change is the next version and an event; the same rules change nothing', async () => {
    const r = await createStream('alice', streamBody({}));
    expect(r.status).toBe(201);
    expect(r.body.rules_version).toBeUndefined();
    const id = r.body.task_id as string;
    const none = await stack.http.get(`/v1/vision/tasks/${id}/rules`).use(stack.as('alice'));
    expect(none.body).toEqual({ task_id: id, rules_version: 0, zones: [], lines: [] });

    const v1 = await putRules('alice', id, { zones: [zone] });
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({ rules_version: 1, zones: [{ id: 'bay' }], lines: [] });
    const same = await putRules('alice', id, { zones: [{ ...zone, min_score: 0 }], lines: [] });
    expect(same.body.rules_version).toBe(1);
    const v2 = await putRules('alice', id, { lines: [line] });
    expect(v2.body).toMatchObject({ rules_version: 2, zones: [], lines: [{ id: 'gate' }] });
    expect((await stack.http.get(`/v1/vision/tasks/${id}`).use(stack.as('alice'))).body.rules_version).toBe(
      2,
    );

    const changes = await waitFor(async () => {
      const c = eventsOf(id).filter((e) => e.type === 'task.rules_changed');
      return c.length === 2 ? c : undefined;
    });
    expect(changes.map((c) => c.rules_version)).toEqual([1, 2]);
    expect(changes[1]).toMatchObject({ status: 'running', rules: { zones: [], lines: [{ id: 'gate' }] } });

    expect((await putRules('mallory', id, { zones: [zone] })).status).toBe(404);
  });

  test.each([
    [
      'a self-intersecting polygon',
      {
        zones: [
          {
            id: 'z',
            polygon: [
              [0.1, 0.1],
              [0.9, 0.9],
              [0.9, 0.1],
              [0.1, 0.9],
            ],
          },
        ],
      },
      'invalid_field',
      { field: 'zones.0.polygon' },
    ],
    [
      'a degenerate line',
      { lines: [{ id: 'l', start: [0.5, 0.5], end: [0.5, 0.5] }] },
      'invalid_field',
      { field: 'lines.0.end' },
    ],
    [
      'a point outside [0, 1]',
      { lines: [{ id: 'l', start: [0.5, 1.5], end: [0.5, 0.1] }] },
      'invalid_field',
      { field: 'lines.0.start.1' },
    ],
    [
      'too many rules',
      { lines: Array.from({ length: 21 }, (_, i) => ({ id: `l${i}`, start: [0, 0], end: [1, 1] })) },
      'invalid_field',
      { field: 'lines' },
    ],
    ['a rule set over RULE_LIMITS.maxBytes', overLimit(), 'invalid_field', { field: 'zones' }],
    [
      'an unknown field',
      { zones: [{ ...zone, colour: 'red' }] },
      'unknown_field',
      { fields: ['zones.0.colour'] },
    ],
  ])('refuses %s on create and on PUT, with the spec error shape', async (_, rules, reason, details) => {
    const before = (await stack.http.get('/v1/vision/tasks').use(stack.as('carol'))).body.items.length;
    const r = await createStream('carol', streamBody(rules));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'OP-TASK-REQUEST-INVALID', details: { reason, ...details } });
    expect((await stack.http.get('/v1/vision/tasks').use(stack.as('carol'))).body.items.length).toBe(before);

    const t = await createStream('carol', streamBody({}));
    const put = await putRules('carol', t.body.task_id, rules);
    expect(put.status).toBe(400);
    expect(put.body.error).toMatchObject({
      code: 'OP-TASK-REQUEST-INVALID',
      details: { reason, ...details },
    });
    expect(
      (await stack.http.get(`/v1/vision/tasks/${t.body.task_id}/rules`).use(stack.as('carol'))).body
        .rules_version,
    ).toBe(0);
  });

  test('a file task takes zones and lines as JSON text fields; a field that is not JSON is refused', async () => {
    const up = (fields: Record<string, string>) => {
      let req = stack.http
        .post('/v1/vision/video-tasks')
        .use(stack.as('dave'))
        .set('Idempotency-Key', randomUUID())
        .field('scene_code', 'person_vehicle');
      for (const [k, v] of Object.entries(fields)) req = req.field(k, v);
      return req.attach('file', readFileSync(MP4), 'a.mp4');
    };
    const ok = await up({ zones: JSON.stringify([zone]), lines: JSON.stringify([line]) });
    expect(ok.status).toBe(201);
    expect(ok.body.rules_version).toBe(1);
    const rules = await stack.http.get(`/v1/vision/tasks/${ok.body.task_id}/rules`).use(stack.as('dave'));
    expect(rules.body).toMatchObject({ rules_version: 1, zones: [{ id: 'bay' }], lines: [{ id: 'gate' }] });

    const bad = await up({ zones: '[{"id": "z"' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ reason: REASON.invalid_field, field: 'zones' });
    const crossing = await up({ lines: JSON.stringify([{ id: 'l', start: [0.2, 0.2], end: [0.2, 0.2] }]) });
    expect(crossing.body.error.details).toMatchObject({ reason: REASON.invalid_field, field: 'lines.0.end' });
  });

  test('a create refused after its task row was written keeps no rules behind', async () => {
    const versions = async () =>
      Number(
        ((await stack.tasks.db.knex('task_rule_versions').count({ n: '*' }).first()) as { n: string }).n,
      );
    for (let i = 0; i < 6; i++) expect((await createStream('hana', streamBody({}))).status).toBe(201);
    const before = await versions();
    const refused = await createStream('hana', streamBody({ zones: [zone] }));
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
    expect(await versions()).toBe(before);
  });

  test('the same key with other rules is another meaning', async () => {
    const key = randomUUID();
    expect((await createStream('erin', streamBody({ zones: [zone] }), key)).status).toBe(201);
    expect((await createStream('erin', streamBody({ zones: [zone] }), key)).status).toBe(200);
    const other = await createStream('erin', streamBody({ lines: [line] }), key);
    expect(other.status).toBe(400);
    expect(other.body.error.details.reason).toBe(REASON.idempotency_mismatch);
  });
});
