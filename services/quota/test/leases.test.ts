import { eventually, type Harness, startHarness } from './helpers';

describe('quota leases (HTTP, PGlite)', () => {
  let h: Harness;
  const start = async (o: Parameters<typeof startHarness>[0] = {}) => {
    h = await startHarness({ start: '2026-03-09T04:00:00Z', ...o });
  };
  afterEach(async () => {
    await h.close();
  });

  const lease = (
    subject: string,
    id: string,
    min: number,
    max: number,
    extra: Record<string, unknown> = {},
  ) =>
    h.http
      .put(`/internal/v1/leases/${id}`)
      .use(h.auth(subject))
      .send({ kind: 'image', min_units: min, max_units: max, window_ms: 10_000, ttl_ms: 60_000, ...extra });
  const spend = (subject: string, id: string, spends: Array<[string, number]>) =>
    h.http
      .post(`/internal/v1/leases/${id}/spends`)
      .use(h.auth(subject))
      .send({ spends: spends.map(([charge_id, units]) => ({ charge_id, units })) });
  const close = (subject: string, id: string) =>
    h.http.post(`/internal/v1/leases/${id}/close`).use(h.auth(subject)).send({});
  const images = async (subject: string) =>
    (await h.http.get('/v1/vision/quota').use(h.auth(subject))).body.images as {
      used: number;
      held: number;
      remaining: number;
      day: string;
    };
  const charge = (subject: string, id: string, units: number) =>
    h.http.post('/internal/v1/charges').use(h.auth(subject)).send({ charge_id: id, kind: 'image', units });

  it('a lease is held until spent; each call is charged once with its own event; close returns the rest', async () => {
    await start();
    const r = await lease('alice', 'l1', 2, 20);
    expect(r.status).toBe(201);
    // 2 asked for, and up to half of the 98 left beyond them, capped at 20.
    expect(r.body).toMatchObject({
      lease_id: 'l1',
      units: 20,
      spent_units: 0,
      day: '2026-03-09',
      usable_until: '2026-03-09T04:00:10.000Z',
      expires_at: '2026-03-09T04:01:00.000Z',
      status: 'held',
    });
    expect((await lease('alice', 'l1', 2, 20)).status).toBe(200);
    expect(await images('alice')).toMatchObject({ used: 0, held: 20, remaining: 80 });

    const s = await spend('alice', 'l1', [
      ['call-a', 3],
      ['call-b', 1],
      ['call-c', 2],
    ]);
    expect(s.status).toBe(200);
    expect(s.body.spends.map((x: { outcome: string }) => x.outcome)).toEqual([
      'charged',
      'charged',
      'charged',
    ]);
    expect(await images('alice')).toMatchObject({ used: 6, held: 14, remaining: 80 });
    // A report sent again charges nothing.
    const again = await spend('alice', 'l1', [
      ['call-b', 1],
      ['call-d', 4],
    ]);
    expect(again.body.spends.map((x: { outcome: string }) => x.outcome)).toEqual(['replayed', 'charged']);
    expect(await images('alice')).toMatchObject({ used: 10, held: 10, remaining: 80 });

    const c = await close('alice', 'l1');
    expect(c.body).toMatchObject({ units: 20, spent_units: 10, status: 'settled' });
    expect(await images('alice')).toMatchObject({ used: 10, held: 0, remaining: 90 });
    expect((await close('alice', 'l1')).status).toBe(200);
    await h.parts.relay.flush();
    await eventually(() => h.events.filter((e) => e.type === 'charged').length === 4);
    expect(h.events.filter((e) => e.type === 'charged').map((e) => e.units)).toEqual([3, 1, 2, 4]);
  });

  it('a live lease grows to what its holder needs, and refuses to grow past its window', async () => {
    await start();
    await charge('alice', 'pre', 90);
    const first = await lease('alice', 'l1', 1, 1);
    expect(first.body.units).toBe(1);
    const grown = await lease('alice', 'l1', 4, 8);
    // 3 more needed, and half of the 6 left beyond them.
    expect(grown.body.units).toBe(7);
    expect(await images('alice')).toMatchObject({ used: 90, held: 7, remaining: 3 });
    const tooMuch = await lease('alice', 'l1', 11, 11);
    expect(tooMuch.status).toBe(429);
    expect(tooMuch.body.error.code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
    h.clock.advance(10_000);
    const ended = await lease('alice', 'l1', 8, 8);
    expect([ended.status, ended.body.error.details.reason]).toEqual([400, 'lease_ended']);
  });

  it('a lease the day has no room for recalls the other leases: their window ends, and their units come back as they close', async () => {
    await start({ image: 10 });
    // One holder (an images replica) took most of the day; the other's lease spent what it got.
    expect((await lease('alice', 'held', 1, 10)).body.units).toBe(5);
    expect((await lease('alice', 'mine', 1, 10)).body.units).toBe(3);
    expect((await spend('alice', 'held', [['h-1', 1]])).body.usable_until).toBe('2026-03-09T04:00:10.000Z');
    await spend('alice', 'mine', [
      ['m-1', 1],
      ['m-2', 1],
      ['m-3', 1],
    ]);
    // 2 free, 4 held by the other lease: a lease of 3 more is refused, and the other lease is recalled.
    const refused = await lease('alice', 'mine', 6, 6);
    expect(refused.status).toBe(429);
    expect(refused.body.error.details).toMatchObject({ limit: 10, used: 4, held: 4, recalled: 4 });
    // Its holder learns it at its next report: the window ended now, and what it reserved before is still paid.
    const next = await spend('alice', 'held', [['h-2', 1]]);
    expect(next.body).toMatchObject({
      usable_until: '2026-03-09T04:00:00.000Z',
      spends: [{ outcome: 'charged' }],
    });
    // It can no longer grow; once closed, its 3 unspent units go to the lease that waited for them.
    const grow = await lease('alice', 'held', 6, 6);
    expect([grow.status, grow.body.error.details.reason]).toEqual([400, 'lease_ended']);
    expect((await close('alice', 'held')).status).toBe(200);
    expect((await lease('alice', 'mine', 6, 6)).body.units).toBe(6);
    expect(await images('alice')).toMatchObject({ used: 5, held: 3, remaining: 2 });
    // With no unit held elsewhere, a refusal recalls nothing.
    await spend('alice', 'mine', [
      ['m-4', 1],
      ['m-5', 1],
      ['m-6', 1],
    ]);
    const spentDay = await lease('alice', 'new', 3, 3);
    expect(spentDay.status).toBe(429);
    expect(spentDay.body.error.details).not.toHaveProperty('recalled');
  });

  it('concurrent leases and spends of three holders fill the day to its limit and never past it', async () => {
    await start({ image: 10 });
    const holders = ['a', 'b', 'c'];
    const granted = await Promise.all(holders.map((x) => lease('alice', `l-${x}`, 1, 10)));
    expect(granted.map((r) => r.status)).toEqual([201, 201, 201]);
    const units = granted.map((r) => r.body.units as number);
    // Taken one after another, whatever the order: 1 + half of the 9 left, then 1 + half
    // of the 4 left, then the 1 of 1 left.
    expect([...units].sort((a, b) => a - b)).toEqual([1, 3, 5]);
    // Each holder spends every unit of its lease, then one unit more than it has.
    const spent = await Promise.all(
      holders.map((x, i) =>
        spend(
          'alice',
          `l-${x}`,
          Array.from({ length: units[i] + 1 }, (_, k): [string, number] => [`${x}-${k}`, 1]),
        ),
      ),
    );
    // Every unit of the leases is charged, and of the three spends beyond them exactly one: the unit
    // no lease took. The day ends exactly at its limit.
    const charged = spent.flatMap((r) => r.body.spends).filter((s) => s.outcome === 'charged');
    expect(charged.length).toBe(10);
    expect(await images('alice')).toMatchObject({ used: 10, held: 0, remaining: 0 });
  });

  it('an expired lease frees its unspent units; its late spends are charged only if they still fit', async () => {
    await start({ image: 10 });
    expect((await lease('alice', 'dead', 6, 6)).status).toBe(201);
    expect((await spend('alice', 'dead', [['x1', 2]])).body.spends[0].outcome).toBe('charged');
    expect(await images('alice')).toMatchObject({ used: 2, held: 4, remaining: 4 });
    h.clock.advance(60_000);
    // Reads ignore it at once; the sweeper records it.
    expect(await images('alice')).toMatchObject({ used: 2, held: 0, remaining: 8 });
    expect((await h.parts.sweeper.sweep()).expired).toBe(1);
    const late = await spend('alice', 'dead', [['x2', 3]]);
    expect(late.body.spends[0].outcome).toBe('charged');
    await charge('alice', 'fill', 5);
    const refused = await spend('alice', 'dead', [['x3', 1]]);
    expect(refused.body.spends[0].outcome).toBe('exhausted');
    expect(await images('alice')).toMatchObject({ used: 10, held: 0, remaining: 0 });
  });

  it('a lease never spends into the next UTC+8 day: its window ends at midnight and its calls count on its day', async () => {
    // 15:59:55Z is 23:59:55 at UTC+8.
    await start({ start: '2026-03-09T15:59:55Z', image: 10 });
    const r = await lease('alice', 'late', 3, 3);
    expect(r.body).toMatchObject({ day: '2026-03-09', usable_until: '2026-03-09T16:00:00.000Z' });
    h.clock.advance(10_000);
    expect((await lease('alice', 'late', 3, 3)).body.error.details.reason).toBe('lease_ended');
    // A call that started before midnight reports after it: charged on the lease's day.
    expect((await spend('alice', 'late', [['c1', 2]])).body.spends[0].outcome).toBe('charged');
    expect(await images('alice')).toMatchObject({ day: '2026-03-10', used: 0, held: 0, remaining: 10 });
    const day = await h.db.knex('counters').where({ subject: 'alice', kind: 'image' }).select('day', 'used');
    expect(day).toEqual([{ day: '2026-03-09', used: 2 }]);
  });

  it('refuses malformed leases and spends, lease ids of holds, and other subjects', async () => {
    await start();
    expect((await lease('alice', 'l1', 5, 4)).status).toBe(400);
    expect((await lease('alice', 'l1', 1, 2, { window_ms: 120_000 })).status).toBe(400);
    expect((await lease('alice', 'l1', 1, 2, { extra: 1 })).body.error.details.reason).toBe('unknown_field');
    await h.http
      .post('/internal/v1/holds')
      .use(h.auth('alice'))
      .send({ hold_id: 'h1', kind: 'image', units: 1 });
    expect((await lease('alice', 'h1', 1, 1)).body.error.details.reason).toBe('lease_id_conflict');
    expect((await lease('alice', 'l1', 1, 1)).status).toBe(201);
    expect(
      (await h.http.post('/internal/v1/holds/l1/settle').use(h.auth('alice')).send({ units: 1 })).status,
    ).toBe(404);
    expect((await spend('mallory', 'l1', [['m', 1]])).status).toBe(404);
    expect((await close('mallory', 'l1')).status).toBe(404);
    expect(
      (
        await spend('alice', 'l1', [
          ['d', 1],
          ['d', 1],
        ])
      ).status,
    ).toBe(400);
    expect(await images('alice')).toMatchObject({ used: 0, held: 2 });
  });
});
