/**
 * The claim driver (idempotency/claims.ts) over a real claim table on PGlite: the whole cycle of one
 * Idempotency-Key with a service's steps written here (run, replay, finish), including two drivers
 * sharing the table as two replicas would.
 */
import {
  ApiError,
  type ClaimRecord,
  ClaimTable,
  type ClaimSteps,
  FakeClock,
  IdempotentRequests,
  type Knex,
  type Migration,
  type NewClaim,
  type Db,
  createLogger,
  openDb,
} from '../src';
import { refusal } from '../../../test/helpers/refusal';

interface Rec extends ClaimRecord {
  note: string;
  answer?: string;
}

const migrations: Migration[] = [
  {
    name: '001_calls',
    up: async (k) => {
      await k.schema.createTable('calls', (t) => {
        t.text('subject').notNullable();
        t.text('idem').notNullable();
        t.text('task_id').notNullable();
        t.text('fingerprint').notNullable();
        t.text('state').notNullable();
        t.integer('attempt').notNullable();
        t.timestamp('lease_until', { useTz: true }).notNullable();
        t.text('note').notNullable();
        t.text('answer');
        t.primary(['subject', 'idem']);
      });
    },
  },
];

class Calls extends ClaimTable<Rec, { note: string }> {
  constructor(knex: Knex) {
    super(knex, 'calls', 'idem');
  }
  claim(c: NewClaim & { note: string }): Promise<boolean> {
    return this.insertClaim(c, { note: c.note });
  }
  protected toRecord(r: Record<string, unknown>): Rec {
    return { ...this.base(r), note: String(r.note), answer: (r.answer as string | null) ?? undefined };
  }
}

const logger = createLogger('claims-test', { level: 'silent' });
let db: Db;
let calls: Calls;
let clock: FakeClock;
beforeAll(async () => {
  db = await openDb(
    { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: ':memory:' },
    { schema: 'claims', migrations },
  );
  calls = new Calls(db.knex);
});
afterAll(() => db.close());
beforeEach(() => {
  clock = new FakeClock(new Date());
});

const driver = (leaseMs = 60_000, waitMs = 300) =>
  new IdempotentRequests<Rec, { note: string }>({
    store: calls,
    clock,
    logger,
    name: 'test call',
    settings: { leaseMs, waitMs, pollMs: 10 },
  });

/** A service's steps: `work` is what running costs; charges counts what was charged. */
function service(work: () => Promise<void> = async () => undefined) {
  const charged: string[] = [];
  const runs: Array<{ attempt: number; fresh: boolean }> = [];
  const steps: ClaimSteps<Rec, { status: number; answer: string }> = {
    run: async (owned) => {
      runs.push({ attempt: owned.ref.attempt, fresh: owned.fresh });
      await work();
      charged.push(owned.taskId);
      await calls.markSettling(owned.ref, { answer: `answer of ${owned.taskId}` });
      await calls.markCompleted(owned.ref);
      return { status: 201, answer: `answer of ${owned.taskId}` };
    },
    replay: async (c) => (c.answer ? { status: 200, answer: c.answer } : undefined),
    finish: async (c) => {
      charged.push(c.taskId);
      await calls.markCompleted(c);
    },
  };
  return { steps, charged, runs };
}

const req = (key: string, fingerprint = 'fp') => ({ subject: 's', key, fingerprint, data: { note: 'n' } });
let n = 0;
const newKey = () => `k${++n}`;

test('concurrent duplicates through two drivers (two replicas) run once and replay the first answer', async () => {
  const key = newKey();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const svc = service(() => gate);
  const [a, b] = [driver(60_000, 5_000), driver(60_000, 5_000)];
  const answers = Promise.all([0, 1, 2, 3].map((i) => (i % 2 ? a : b).handle(req(key), svc.steps)));
  await new Promise((r) => setTimeout(r, 100));
  release();
  const got = await answers;
  expect(got.map((g) => g.status).sort()).toEqual([200, 200, 200, 201]);
  expect(new Set(got.map((g) => g.answer)).size).toBe(1);
  expect(svc.runs).toHaveLength(1);
  expect(svc.charged).toHaveLength(1);
});

test('another meaning under the key: 400 idempotency_mismatch', async () => {
  const key = newKey();
  const svc = service();
  await driver().handle(req(key), svc.steps);
  const err = await refusal(driver().handle(req(key, 'other'), svc.steps));
  expect(err).toMatchObject({ code: 'OP-TASK-REQUEST-INVALID', details: { reason: 'idempotency_mismatch' } });
});

test('a duplicate of a live first request answers 503 in_progress with Retry-After once the wait passes', async () => {
  const key = newKey();
  await calls.claim({
    ...req(key),
    taskId: 't-live',
    leaseUntil: new Date(clock.now().getTime() + 60_000),
    createdAt: clock.now(),
    note: 'n',
  });
  const svc = service();
  const err = await refusal(driver().handle(req(key), svc.steps));
  expect(err).toMatchObject({ code: 'OP-SYS-UNAVAILABLE', details: { reason: 'in_progress' } });
  expect(err.headers).toMatchObject({ 'Retry-After': '1' });
  expect(svc.runs).toHaveLength(0);
});

test('a running claim whose owner died is taken over (attempt 1, same task id) and run once', async () => {
  const key = newKey();
  await calls.claim({
    ...req(key),
    taskId: 't-dead',
    leaseUntil: new Date(clock.now().getTime() - 1),
    createdAt: clock.now(),
    note: 'n',
  });
  const svc = service();
  const [x, y] = await Promise.all([
    driver().handle(req(key), svc.steps),
    driver().handle(req(key), svc.steps),
  ]);
  expect([x.status, y.status].sort()).toEqual([200, 201]);
  expect(x.answer).toBe('answer of t-dead');
  expect(svc.runs).toEqual([{ attempt: 1, fresh: false }]);
  expect(svc.charged).toEqual(['t-dead']);
});

test('a settling claim whose owner died is finished once (by a duplicate or the sweeper), then replayed', async () => {
  const svc = service();
  const key = newKey();
  const lapsed = new Date(clock.now().getTime() - 1);
  await calls.claim({
    ...req(key),
    taskId: 't-settle',
    leaseUntil: lapsed,
    createdAt: clock.now(),
    note: 'n',
  });
  await calls.markSettling({ subject: 's', key, taskId: 't-settle', attempt: 0 }, { answer: 'stored' });
  const got = await driver().handle(req(key), svc.steps);
  expect(got).toEqual({ status: 200, answer: 'stored' });
  expect(svc.charged).toEqual(['t-settle']);
  expect(await driver().finishLapsed(svc.steps.finish)).toBe(0);

  const key2 = newKey();
  await calls.claim({
    ...req(key2),
    taskId: 't-sweep',
    leaseUntil: lapsed,
    createdAt: clock.now(),
    note: 'n',
  });
  await calls.markSettling({ subject: 's', key: key2, taskId: 't-sweep', attempt: 0 }, { answer: 'stored' });
  const [one, two] = await Promise.all([
    driver().finishLapsed(svc.steps.finish),
    driver().finishLapsed(svc.steps.finish),
  ]);
  expect(one + two).toBe(1);
  expect((await calls.get('s', key2))?.state).toBe('completed');
  expect(svc.charged).toEqual(['t-settle', 't-sweep']);
});

test('a refusal that releases the claim frees the key; any other failure ends the lease at once', async () => {
  const key = newKey();
  const refusing: ClaimSteps<Rec, never> = {
    run: async (owned) => {
      await owned.release();
      throw new ApiError('OP-TASK-BREAKER-OPEN', 'no');
    },
    replay: async () => undefined,
    finish: async () => undefined,
  };
  expect((await refusal(driver().handle(req(key), refusing))).code).toBe('OP-TASK-BREAKER-OPEN');
  expect(await calls.get('s', key)).toBeUndefined();
  const svc = service();
  expect((await driver().handle(req(key, 'another meaning now'), svc.steps)).status).toBe(201);

  const key2 = newKey();
  const failing: ClaimSteps<Rec, never> = {
    ...refusing,
    run: async () => Promise.reject(new Error('db down')),
  };
  await expect(driver().handle(req(key2), failing)).rejects.toThrow('db down');
  const left = await calls.get('s', key2);
  expect(left?.state).toBe('running');
  expect(left!.leaseUntil.getTime()).toBeLessThanOrEqual(clock.now().getTime());
  expect((await driver().handle(req(key2), svc.steps)).status).toBe(201);
  expect(svc.runs.at(-1)).toEqual({ attempt: 1, fresh: false });
});

test('the owner renews its lease while it works longer than the lease: a duplicate waits, it does not take over', async () => {
  const key = newKey();
  const realClock = { now: () => new Date() };
  const slow = service(() => new Promise((r) => setTimeout(r, 1_500)));
  const d = () =>
    new IdempotentRequests<Rec, { note: string }>({
      store: calls,
      clock: realClock,
      logger,
      name: 'test call',
      settings: { leaseMs: 600, waitMs: 5_000, pollMs: 20 },
    });
  const first = d().handle(req(key), slow.steps);
  await new Promise((r) => setTimeout(r, 100));
  const second = await d().handle(req(key), slow.steps);
  expect((await first).status).toBe(201);
  expect(second.status).toBe(200);
  expect(slow.runs).toHaveLength(1);
});

test('an owner whose key was released and claimed again (attempt 0, new task id) cannot change the new claim', async () => {
  const key = newKey();
  const lapsed = new Date(clock.now().getTime() - 1);
  await calls.claim({ ...req(key), taskId: 't-old', leaseUntil: lapsed, createdAt: clock.now(), note: 'n' });
  const old = { subject: 's', key, taskId: 't-old', attempt: 0 };
  // Another request takes the lapsed claim over (attempt 1), is refused, and releases the key...
  expect(await calls.takeOver(old, clock.now(), new Date(clock.now().getTime() + 60_000))).toBe(true);
  await calls.release({ ...old, attempt: 1 });
  // ...which a new request claims afresh: attempt 0 again, under its own task id.
  const lease = new Date(clock.now().getTime() + 60_000);
  await calls.claim({ ...req(key), taskId: 't-new', leaseUntil: lease, createdAt: clock.now(), note: 'n' });
  // The first owner, still alive, reaches its settling step with its attempt-0 ref: nothing matches.
  expect(await calls.markSettling(old, { answer: 'old answer' })).toBe(false);
  await calls.markCompleted(old);
  await calls.renewLease(old, new Date(clock.now().getTime() + 120_000));
  expect(await calls.get('s', key)).toMatchObject({
    taskId: 't-new',
    state: 'running',
    attempt: 0,
    leaseUntil: lease,
  });
});
