import { type Harness, startHarness } from './helpers';

describe('quota charges and refunds (HTTP, PGlite)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ start: '2026-03-09T04:00:00Z' });
  });
  afterEach(async () => {
    await h.close();
  });

  const charge = (subject: string, charge_id: string, kind = 'video', units = 1) =>
    h.http.post('/internal/v1/charges').use(h.auth(subject)).send({ charge_id, kind, units });
  const quota = (subject: string) => h.http.get('/v1/vision/quota').use(h.auth(subject));

  it('refuses calls without a valid identity', async () => {
    const r1 = await h.http.post('/internal/v1/charges').send({ charge_id: 'c1', kind: 'video', units: 1 });
    expect(r1.status).toBe(401);
    expect(r1.body.error.code).toBe('OP-AUTH-REQUIRED');
    const r2 = await h.http.get('/v1/vision/quota').set('x-vision-identity', 'forged.signature');
    expect(r2.status).toBe(401);
    expect(r2.body.error.code).toBe('OP-AUTH-REQUIRED');
    expect((await quota('alice')).body.video_tasks.used).toBe(0);
  });

  it('charges, answers 201 with the day and rate figures, and 200 with the same body on repeat', async () => {
    const r = await charge('alice', 'task-1');
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      charge_id: 'task-1',
      kind: 'video',
      units: 1,
      day: '2026-03-09',
      status: 'charged',
      limit: 5,
      remaining: 4,
      resets_at: '2026-03-09T16:00:00.000Z',
    });
    const again = await charge('alice', 'task-1');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(r.body);
    const q = await quota('alice');
    expect(q.status).toBe(200);
    expect(q.body.video_tasks).toEqual({
      limit: 5,
      used: 1,
      held: 0,
      remaining: 4,
      day: '2026-03-09',
      resets_at: '2026-03-09T16:00:00.000Z',
    });
    expect(q.body.images).toMatchObject({ limit: 100, used: 0, held: 0, remaining: 100 });
  });

  it('keeps subjects apart', async () => {
    expect((await charge('alice', 'same-id')).status).toBe(201);
    expect((await charge('bob', 'same-id')).status).toBe(201);
    expect((await quota('alice')).body.video_tasks.used).toBe(1);
    expect((await quota('bob')).body.video_tasks.used).toBe(1);
  });

  it('answers 429 OP-QUOTA-DAILY-EXHAUSTED with details and Retry-After when the day is used up', async () => {
    for (let i = 0; i < 5; i++) expect((await charge('alice', `t${i}`)).status).toBe(201);
    const r = await charge('alice', 't5');
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
    expect(r.body.error.details).toMatchObject({
      limit: 5,
      used: 5,
      remaining: 0,
      resets_at: '2026-03-09T16:00:00.000Z',
    });
    // 04:00Z -> 16:00Z is 12 hours.
    expect(r.headers['retry-after']).toBe(String(12 * 3600));
    // The refused charge left nothing behind: the id can be used once quota is back.
    expect((await quota('alice')).body.video_tasks.used).toBe(5);
    expect((await h.http.post('/internal/v1/charges/t5/refund').use(h.auth('alice'))).status).toBe(404);
  });

  it('a new day starts at 16:00Z with a fresh quota', async () => {
    for (let i = 0; i < 5; i++) await charge('alice', `t${i}`);
    h.clock.set('2026-03-09T15:59:59Z');
    expect((await charge('alice', 'late')).status).toBe(429);
    h.clock.set('2026-03-09T16:00:00Z');
    const r = await charge('alice', 'late');
    expect(r.status).toBe(201);
    expect(r.body.day).toBe('2026-03-10');
    expect(r.body.resets_at).toBe('2026-03-10T16:00:00.000Z');
  });

  it('refunds idempotently: a second refund changes nothing', async () => {
    await charge('alice', 'a');
    await charge('alice', 'b');
    const r1 = await h.http.post('/internal/v1/charges/a/refund').use(h.auth('alice'));
    expect(r1.status).toBe(200);
    expect(r1.body).toEqual({ charge_id: 'a', day: '2026-03-09', status: 'refunded' });
    const r2 = await h.http.post('/internal/v1/charges/a/refund').use(h.auth('alice'));
    expect(r2.status).toBe(200);
    expect(r2.body).toEqual(r1.body);
    expect((await quota('alice')).body.video_tasks.used).toBe(1);
    // Charging a refunded id again does not charge twice: the stored charge is returned as it is.
    const again = await charge('alice', 'a');
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('refunded');
    expect((await quota('alice')).body.video_tasks.used).toBe(1);
  });

  it('a refund of an unknown id leaves a tombstone: a late charge with that id is answered refunded and consumes nothing', async () => {
    const early = await h.http.post('/internal/v1/charges/late/refund').use(h.auth('alice'));
    expect(early.status).toBe(404);
    const late = await charge('alice', 'late');
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ charge_id: 'late', kind: 'video', units: 1, status: 'refunded' });
    expect(late.body.remaining).toBe(5);
    expect((await quota('alice')).body.video_tasks.used).toBe(0);
    // Still unknown as a charge; the id stays spent; other subjects are unaffected.
    expect((await h.http.post('/internal/v1/charges/late/refund').use(h.auth('alice'))).status).toBe(404);
    expect((await charge('alice', 'late', 'image', 3)).body.status).toBe('refunded');
    expect((await quota('alice')).body.images.used).toBe(0);
    expect((await charge('bob', 'late')).status).toBe(201);
    // Nothing was charged or refunded for alice, so no event was written.
    expect(await h.db.knex('outbox').where({ key: 'alice' }).count({ n: '*' })).toEqual([{ n: 0 }]);
  });

  it('another subject cannot refund my charge', async () => {
    await charge('alice', 'mine');
    const r = await h.http.post('/internal/v1/charges/mine/refund').use(h.auth('mallory'));
    expect(r.status).toBe(404);
    expect((await quota('alice')).body.video_tasks.used).toBe(1);
  });

  it('refunds to the day of the charge: 23:59 UTC+8 charge refunded after midnight frees nothing today', async () => {
    h.clock.set('2026-03-09T15:59:00Z'); // 23:59 at UTC+8
    for (let i = 0; i < 5; i++) expect((await charge('alice', `d1-${i}`)).body.day).toBe('2026-03-09');
    h.clock.set('2026-03-09T16:01:00Z'); // 00:01 at UTC+8, the next day
    for (let i = 0; i < 5; i++) expect((await charge('alice', `d2-${i}`)).status).toBe(201);
    expect((await charge('alice', 'd2-extra')).status).toBe(429);

    const refund = await h.http.post('/internal/v1/charges/d1-0/refund').use(h.auth('alice'));
    expect(refund.status).toBe(200);
    expect(refund.body.day).toBe('2026-03-09');
    // Today is still full; the earlier day got its unit back.
    expect((await charge('alice', 'd2-extra')).status).toBe(429);
    const q = await quota('alice');
    expect(q.body.video_tasks).toMatchObject({ day: '2026-03-10', used: 5, remaining: 0 });
    const rows = await h.db.knex('counters').where({ subject: 'alice', kind: 'video' }).orderBy('day');
    expect(rows.map((r: { day: string; used: number }) => [r.day, r.used])).toEqual([
      ['2026-03-09', 4],
      ['2026-03-10', 5],
    ]);
  });

  it('20 concurrent charges with distinct ids when 5 remain: exactly 5 accepted', async () => {
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => charge('alice', `c-${i}`)));
    const statuses = rs.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    expect((await quota('alice')).body.video_tasks).toMatchObject({ used: 5, remaining: 0 });
    expect(await h.db.knex('charges').where({ subject: 'alice' }).count({ n: '*' })).toEqual([{ n: 5 }]);
  });

  it('20 concurrent charges with one id: one charge, every caller gets it', async () => {
    const rs = await Promise.all(Array.from({ length: 20 }, () => charge('alice', 'dup')));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(1);
    expect(rs.filter((r) => r.status === 200)).toHaveLength(19);
    for (const r of rs) expect(r.body.charge_id).toBe('dup');
    expect((await quota('alice')).body.video_tasks.used).toBe(1);
  });

  it('charges images by units and refuses a charge larger than what remains', async () => {
    expect((await charge('alice', 'img-1', 'image', 98)).status).toBe(201);
    const r = await charge('alice', 'img-2', 'image', 3);
    expect(r.status).toBe(429);
    expect(r.body.error.details).toMatchObject({ limit: 100, used: 98, remaining: 2 });
    expect((await charge('alice', 'img-2', 'image', 2)).status).toBe(201);
  });

  it('answers 400 when a charge id is reused with other units', async () => {
    await charge('alice', 'x', 'image', 3);
    const r = await charge('alice', 'x', 'image', 4);
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe('charge_id_conflict');
    expect((await quota('alice')).body.images.used).toBe(3);
  });
});

describe('charge body validation', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it.each([
    [{ charge_id: 'a', kind: 'video', units: 1, extra: true }, 'unknown_field'],
    [{ charge_id: 'a', kind: 'audio', units: 1 }, 'invalid_field'],
    [{ charge_id: 'a', kind: 'video', units: 0 }, 'invalid_field'],
    [{ charge_id: 'a', kind: 'video', units: 1.5 }, 'invalid_field'],
    [{ charge_id: 'a b/c', kind: 'video', units: 1 }, 'invalid_field'],
    [{ kind: 'video', units: 1 }, 'invalid_field'],
    [[1, 2], 'invalid_field'],
  ])('rejects the body %j with 400 (%s) and writes nothing', async (body, reason) => {
    const r = await h.http.post('/internal/v1/charges').use(h.auth('alice')).send(body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
    expect(r.body.error.details.reason).toBe(reason);
    expect(await h.db.knex('charges').count({ n: '*' })).toEqual([{ n: 0 }]);
  });

  it('rejects malformed JSON with 400', async () => {
    const r = await h.http
      .post('/internal/v1/charges')
      .use(h.auth('alice'))
      .set('content-type', 'application/json')
      .send('{"charge_id":');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
  });
});

describe('per-subject overrides', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ overrides: { acme: { video: 7, image: 3 }, tiny: { video: 0 } } });
  });
  afterEach(async () => {
    await h.close();
  });

  it('applies the subject override per kind, and the defaults elsewhere', async () => {
    const q = await h.http.get('/v1/vision/quota').use(h.auth('acme'));
    expect(q.body.video_tasks.limit).toBe(7);
    expect(q.body.images.limit).toBe(3);
    const rs = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        h.http
          .post('/internal/v1/charges')
          .use(h.auth('acme'))
          .send({ charge_id: `a${i}`, kind: 'video', units: 1 }),
      ),
    );
    expect(rs.filter((r) => r.status === 201)).toHaveLength(7);
    const tiny = await h.http
      .post('/internal/v1/charges')
      .use(h.auth('tiny'))
      .send({ charge_id: 't', kind: 'video', units: 1 });
    expect(tiny.status).toBe(429);
    expect((await h.http.get('/v1/vision/quota').use(h.auth('tiny'))).body.images.limit).toBe(100);
  });
});
