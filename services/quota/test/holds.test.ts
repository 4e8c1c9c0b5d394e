import { type Harness, startHarness } from './helpers';

describe('quota holds and settle (HTTP, PGlite)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ start: '2026-03-09T04:00:00Z' });
  });
  afterEach(async () => {
    await h.close();
  });

  const hold = (subject: string, hold_id: string, units: number, extra: Record<string, unknown> = {}) =>
    h.http
      .post('/internal/v1/holds')
      .use(h.auth(subject))
      .send({ hold_id, kind: 'image', units, ...extra });
  const settle = (subject: string, id: string, units: number) =>
    h.http.post(`/internal/v1/holds/${id}/settle`).use(h.auth(subject)).send({ units });
  const images = async (subject: string) =>
    (await h.http.get('/v1/vision/quota').use(h.auth(subject))).body.images as {
      used: number;
      held: number;
      remaining: number;
    };
  const useImages = (subject: string, units: number) =>
    h.http
      .post('/internal/v1/charges')
      .use(h.auth(subject))
      .send({ charge_id: `pre-${units}`, kind: 'image', units });

  it('holds count against the day; 200 on repeat; the default ttl is 10 minutes', async () => {
    const r = await hold('alice', 'req-1', 10);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      hold_id: 'req-1',
      units: 10,
      day: '2026-03-09',
      expires_at: '2026-03-09T04:10:00.000Z',
      limit: 100,
      remaining: 90,
    });
    const again = await hold('alice', 'req-1', 10);
    expect(again.status).toBe(200);
    expect(again.body.expires_at).toBe(r.body.expires_at);
    expect(await images('alice')).toMatchObject({ used: 0, held: 10, remaining: 90 });
  });

  it('settle: the settled units become used, the rest is released; settling again changes nothing', async () => {
    await hold('alice', 'req-1', 10);
    const s = await settle('alice', 'req-1', 7);
    expect(s.status).toBe(200);
    expect(s.body).toEqual({ hold_id: 'req-1', day: '2026-03-09', units: 7, status: 'settled' });
    expect(await images('alice')).toMatchObject({ used: 7, held: 0, remaining: 93 });
    const again = await settle('alice', 'req-1', 7);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(s.body);
    expect(await images('alice')).toMatchObject({ used: 7, held: 0 });
    const other = await settle('alice', 'req-1', 5);
    expect(other.status).toBe(400);
    expect(other.body.error.details).toMatchObject({ reason: 'hold_already_settled', settled_units: 7 });
    expect(await images('alice')).toMatchObject({ used: 7, held: 0 });
  });

  it('settle with 0 releases everything; more than held is refused', async () => {
    await hold('alice', 'req-1', 4);
    const tooMany = await settle('alice', 'req-1', 5);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details).toMatchObject({ reason: 'units_exceed_hold', held: 4 });
    expect(await images('alice')).toMatchObject({ used: 0, held: 4 });
    expect((await settle('alice', 'req-1', 0)).status).toBe(200);
    expect(await images('alice')).toMatchObject({ used: 0, held: 0, remaining: 100 });
  });

  it('unknown hold -> 404; another subject cannot settle my hold', async () => {
    expect((await settle('alice', 'nope', 1)).status).toBe(404);
    await hold('alice', 'mine', 3);
    expect((await settle('mallory', 'mine', 3)).status).toBe(404);
    expect(await images('alice')).toMatchObject({ used: 0, held: 3 });
  });

  it('refuses a hold that does not fit with 429 and details', async () => {
    await useImages('alice', 95);
    const r = await hold('alice', 'big', 10);
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
    expect(r.body.error.details).toMatchObject({ limit: 100, used: 95, remaining: 5 });
    expect(Number(r.headers['retry-after'])).toBe(12 * 3600);
    expect(await images('alice')).toMatchObject({ used: 95, held: 0, remaining: 5 });
    expect((await hold('alice', 'big', 5)).status).toBe(201);
  });

  it('10 concurrent holds of 10 when 50 remain never exceed 50', async () => {
    await useImages('alice', 50);
    const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => hold('alice', `r${i}`, 10)));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(5);
    expect(rs.filter((r) => r.status === 429)).toHaveLength(5);
    expect(await images('alice')).toMatchObject({ used: 50, held: 50, remaining: 0 });
    // Settling them all (each to all its units) lands exactly on the limit.
    const accepted = rs.filter((r) => r.status === 201).map((r) => r.body.hold_id as string);
    await Promise.all(accepted.map((id) => settle('alice', id, 10)));
    expect(await images('alice')).toMatchObject({ used: 100, held: 0, remaining: 0 });
  });

  it('a crashed request: its hold expires and frees the units', async () => {
    await useImages('alice', 50);
    expect((await hold('alice', 'crashed', 50, { ttl_ms: 60_000 })).status).toBe(201);
    const refused = await hold('alice', 'next', 1);
    expect(refused.status).toBe(429);
    expect(refused.body.error.details).toMatchObject({ limit: 100, used: 50, held: 50, remaining: 0 });
    h.clock.advance(59_999);
    expect(await images('alice')).toMatchObject({ held: 50, remaining: 0 });
    h.clock.advance(1);
    // Reads ignore the lapsed hold at once, before any sweep.
    expect(await images('alice')).toMatchObject({ used: 50, held: 0, remaining: 50 });
    expect((await hold('alice', 'next', 1)).status).toBe(201);
    // The sweeper records what reads already know.
    expect((await h.parts.sweeper.sweep()).expired).toBe(1);
    const row = await h.db.knex('holds').where({ subject: 'alice', hold_id: 'crashed' }).first();
    expect(row.status).toBe('expired');
    expect((await h.parts.sweeper.sweep()).expired).toBe(0);
  });

  it('a slow request settling after expiry is recorded when its units still fit', async () => {
    await hold('alice', 'slow', 10, { ttl_ms: 1000 });
    h.clock.advance(5000);
    await h.parts.sweeper.sweep();
    const s = await settle('alice', 'slow', 6);
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ hold_id: 'slow', units: 6, status: 'settled' });
    expect(await images('alice')).toMatchObject({ used: 6, held: 0 });
    // Idempotent afterwards, like any settle.
    expect((await settle('alice', 'slow', 6)).status).toBe(200);
    expect(await images('alice')).toMatchObject({ used: 6 });
  });

  it('a slow request settling after expiry gets 429 and records nothing when the day filled up meanwhile', async () => {
    await hold('alice', 'slow', 10, { ttl_ms: 1000 });
    h.clock.advance(2000);
    await useImages('alice', 95); // the lapsed hold no longer reserved its units
    const s = await settle('alice', 'slow', 10);
    expect(s.status).toBe(429);
    expect(s.body.error.code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
    expect(s.body.error.details).toMatchObject({ reason: 'hold_expired', hold_id: 'slow', remaining: 5 });
    expect(await images('alice')).toMatchObject({ used: 95, held: 0, remaining: 5 });
    // Releasing it (0 units) is always possible.
    expect((await settle('alice', 'slow', 0)).status).toBe(200);
    expect(await images('alice')).toMatchObject({ used: 95 });
  });

  it('settling 0 units on an expired hold succeeds even when the day is over its limit', async () => {
    await hold('alice', 'lapsed', 10, { ttl_ms: 1000 });
    h.clock.advance(2000);
    await useImages('alice', 100);
    // The day ends up over its limit (as after a lowered limit): used 103 of 100.
    await h.db
      .knex('counters')
      .where({ subject: 'alice', kind: 'image', day: '2026-03-09' })
      .update({ used: 103 });
    const s = await settle('alice', 'lapsed', 0);
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ hold_id: 'lapsed', units: 0, status: 'settled' });
    expect(await images('alice')).toMatchObject({ used: 103, held: 0 });
    const row = await h.db.knex('holds').where({ subject: 'alice', hold_id: 'lapsed' }).first();
    expect(row.status).toBe('settled');
  });

  it('a hold taken at 23:59 UTC+8 settles onto its own day after midnight', async () => {
    h.clock.set('2026-03-09T15:59:30Z');
    const r = await hold('alice', 'late', 10);
    expect(r.body.day).toBe('2026-03-09');
    h.clock.set('2026-03-09T16:00:30Z');
    expect(await images('alice')).toMatchObject({ used: 0, held: 0, remaining: 100 });
    const s = await settle('alice', 'late', 8);
    expect(s.body.day).toBe('2026-03-09');
    expect(await images('alice')).toMatchObject({ used: 0, remaining: 100 });
    const row = await h.db
      .knex('counters')
      .where({ subject: 'alice', kind: 'image', day: '2026-03-09' })
      .first();
    expect(row.used).toBe(8);
  });
});

describe('hold and settle body validation', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  const hold = (subject: string, hold_id: string, units: number, extra: Record<string, unknown> = {}) =>
    h.http
      .post('/internal/v1/holds')
      .use(h.auth(subject))
      .send({ hold_id, kind: 'image', units, ...extra });
  const images = async (subject: string) =>
    (await h.http.get('/v1/vision/quota').use(h.auth(subject))).body.images as {
      used: number;
      held: number;
      remaining: number;
    };

  it.each([
    [{ hold_id: 'h', kind: 'image', units: 1, ttl_ms: 10 }, 'invalid_field'],
    [{ hold_id: 'h', kind: 'image', units: 1, why: 'x' }, 'unknown_field'],
    [{ hold_id: 'h', kind: 'image' }, 'invalid_field'],
  ])('rejects the hold body %j (%s)', async (body, reason) => {
    const r = await h.http.post('/internal/v1/holds').use(h.auth('alice')).send(body);
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe(reason);
    expect(await images('alice')).toMatchObject({ held: 0 });
  });

  it.each([[{}], [{ units: -1 }], [{ units: 1, extra: 1 }], [{ units: '3' }]])(
    'rejects the settle body %j',
    async (body) => {
      await hold('alice', 'h', 3);
      const r = await h.http.post('/internal/v1/holds/h/settle').use(h.auth('alice')).send(body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
      expect(await images('alice')).toMatchObject({ used: 0, held: 3 });
    },
  );
});
