/**
 * A task's rule history: each set stored once, by content, a bounded number of versions and bytes, and no new
 * version once the task has ended.
 */
import { randomUUID } from 'node:crypto';
import { TOPICS, type IncomingMessage, REASON, RULE_LIMITS, rulesDigest, parseRules } from '@vision/shared';
import { heaviestRules } from '../../../test/helpers/places';
import { type Stack, startClipServer, startStack, waitFor } from './harness';

const MAX_VERSIONS = 5;
const MAX_BYTES = 100_000;

let stack: Stack;
let clips: Awaited<ReturnType<typeof startClipServer>>;
const events: IncomingMessage[] = [];

beforeAll(async () => {
  clips = await startClipServer();
  stack = await startStack({
    env: {
      TASKS_MAX_ACTIVE: '10',
      TASKS_RULES_MAX_VERSIONS: String(MAX_VERSIONS),
      TASKS_RULES_MAX_BYTES: String(MAX_BYTES),
    },
  });
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

const square = (id: string) => ({
  id,
  polygon: [
    [0.2, 0.2],
    [0.8, 0.2],
    [0.8, 0.8],
    [0.2, 0.8],
  ],
});
const A = { zones: [square('a')] };
const B = { zones: [square('b')] };

const create = async (subject: string, rules: object): Promise<string> => {
  const r = await stack.http
    .post('/v1/vision/tasks')
    .use(stack.as(subject))
    .set('Idempotency-Key', randomUUID())
    .send({
      scene_code: 'person_vehicle',
      stream_url: clips.url('person_bicycle_car_parkinglot_intel.mp4'),
      ...rules,
    });
  expect(r.status).toBe(201);
  return r.body.task_id as string;
};
const put = (subject: string, id: string, rules: object) =>
  stack.http.put(`/v1/vision/tasks/${id}/rules`).use(stack.as(subject)).send(rules);
const eventsOf = (id: string) =>
  events.filter((e) => e.key === id).map((e) => e.value as Record<string, unknown>);
const rows = (table: string, id: string) =>
  stack.tasks.db.knex(table).where({ task_id: id }) as Promise<Record<string, unknown>[]>;
const digestOf = (set: object) => {
  const parsed = parseRules(set);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return rulesDigest(parsed.rules);
};

test('each rule set is stored once per task; the task, its versions and its events name it by digest', async () => {
  const id = await create('ada', A);
  for (const [i, set] of [B, A, B].entries())
    expect((await put('ada', id, set)).body.rules_version).toBe(i + 2);

  const sets = await rows('task_rule_sets', id);
  expect(sets.map((s) => s.digest).sort()).toEqual([digestOf(A), digestOf(B)].sort());
  const versions = await rows('task_rule_versions', id);
  expect(versions.map((v) => [v.version, v.digest])).toEqual(
    [A, B, A, B].map((set, i) => [i + 1, digestOf(set)]),
  );
  expect(versions.every((v) => !('rules' in v))).toBe(true);
  const [task] = await rows('tasks', id);
  expect(task).toMatchObject({ rules_version: 4, rules_digest: digestOf(B) });
  expect('rules' in task).toBe(false);

  const got = await stack.http.get(`/v1/vision/tasks/${id}/rules`).use(stack.as('ada'));
  expect(got.body).toMatchObject({ rules_version: 4, zones: [{ id: 'b' }], lines: [] });

  // The set travels on the events that bring it to the task first; the others name it.
  const changes = await waitFor(async () => {
    const c = eventsOf(id).filter((e) => e.type === 'task.rules_changed');
    return c.length === 3 ? c : undefined;
  });
  expect(changes.map((c) => [c.rules_version, c.rules_digest, 'rules' in c])).toEqual([
    [2, digestOf(B), true],
    [3, digestOf(A), false],
    [4, digestOf(B), false],
  ]);
  const created = await waitFor(async () => eventsOf(id).find((e) => e.type === 'task.created'));
  expect(created).toMatchObject({
    rules_version: 1,
    rules_digest: digestOf(A),
    rules: { zones: [{ id: 'a' }] },
  });
  const statuses = eventsOf(id).filter((e) => e.type === 'task.status_changed');
  expect(statuses.every((e) => !('rules' in e))).toBe(true);
});

test(`a task keeps at most ${MAX_VERSIONS} versions: one more is refused, and changes nothing`, async () => {
  const id = await create('bea', A);
  for (let v = 2; v <= MAX_VERSIONS; v++) expect((await put('bea', id, v % 2 ? A : B)).status).toBe(200);
  const over = await put('bea', id, MAX_VERSIONS % 2 ? B : A);
  expect(over.status).toBe(400);
  expect(over.body.error).toMatchObject({
    code: 'OP-TASK-REQUEST-INVALID',
    details: { reason: REASON.rule_history_full, limit: 'versions', maximum: MAX_VERSIONS },
  });
  const got = await stack.http.get(`/v1/vision/tasks/${id}/rules`).use(stack.as('bea'));
  expect(got.body.rules_version).toBe(MAX_VERSIONS);
  // The same rules again are no version: still answered.
  expect((await put('bea', id, MAX_VERSIONS % 2 ? A : B)).body.rules_version).toBe(MAX_VERSIONS);
  expect(await rows('task_rule_versions', id)).toHaveLength(MAX_VERSIONS);
});

test(`a task's distinct rule sets take at most ${MAX_BYTES} bytes; a set it holds already costs none`, async () => {
  const car = heaviestRules(['car']);
  const person = heaviestRules(['person']);
  expect(RULE_LIMITS.maxBytes * 2).toBeGreaterThan(MAX_BYTES);
  const id = await create('cid', car);
  const over = await put('cid', id, person);
  expect(over.status).toBe(400);
  expect(over.body.error.details).toMatchObject({
    reason: REASON.rule_history_full,
    limit: 'bytes',
    maximum: MAX_BYTES,
  });
  expect((await put('cid', id, A)).body.rules_version).toBe(2);
  expect((await put('cid', id, car)).body.rules_version).toBe(3);
  const sets = await rows('task_rule_sets', id);
  expect(sets).toHaveLength(2);
  expect(sets.reduce((n, s) => n + Number(s.bytes), 0)).toBeLessThanOrEqual(MAX_BYTES);
});

test.each([
  ['succeeded', 'its job finished'],
  ['stopped', 'it was stopped'],
] as const)(
  'a task that %s (%s) keeps its rules: a PUT is 409 OP-TASK-ENDED, with no version and no event',
  async (status, _how) => {
    const id = await create('dee', A);
    if (status === 'stopped')
      expect((await stack.http.post(`/v1/vision/tasks/${id}/stop`).use(stack.as('dee'))).status).toBeLessThan(
        300,
      );
    else {
      const job = await waitFor(async () => stack.inference.jobs.get(id));
      job.status = 'succeeded';
    }
    await waitFor(async () => {
      const t = await stack.http.get(`/v1/vision/tasks/${id}`).use(stack.as('dee'));
      return t.body.status === status ? true : undefined;
    });
    // Every event of the task so far has been published (the last says it ended).
    await waitFor(async () => eventsOf(id).find((e) => e.status === status));
    const eventsBefore = eventsOf(id).length;
    const refused = await put('dee', id, B);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'OP-TASK-ENDED', details: { status } });
    // The same rules again are refused too: nothing about an ended task's rules may change.
    expect((await put('dee', id, A)).status).toBe(409);
    const got = await stack.http.get(`/v1/vision/tasks/${id}/rules`).use(stack.as('dee'));
    expect(got.body).toMatchObject({ rules_version: 1, zones: [{ id: 'a' }] });
    expect(await rows('task_rule_versions', id)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(eventsOf(id).filter((e) => e.type === 'task.rules_changed')).toHaveLength(0);
    expect(eventsOf(id)).toHaveLength(eventsBefore);
  },
);
