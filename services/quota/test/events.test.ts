import { eventually, type Harness, startHarness } from './helpers';

describe('quota events through the transactional outbox', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ start: '2026-03-09T15:59:00Z' });
  });
  afterEach(async () => {
    await h.close();
  });

  const unsent = async () => Number((await h.db.knex('outbox').whereNull('sent_at').count({ n: '*' }))[0].n);

  it('publishes charged, refunded, held and settled events with the documented shape, once each', async () => {
    const a = h.auth('alice');
    await h.http.post('/internal/v1/charges').use(a).send({ charge_id: 't1', kind: 'video', units: 1 });
    await h.http.post('/internal/v1/charges').use(a).send({ charge_id: 't1', kind: 'video', units: 1 }); // replay
    h.clock.set('2026-03-09T16:01:00Z');
    await h.http.post('/internal/v1/charges/t1/refund').use(a);
    await h.http.post('/internal/v1/charges/t1/refund').use(a); // no-op
    await h.http.post('/internal/v1/holds').use(a).send({ hold_id: 'r1', kind: 'image', units: 4 });
    await h.http.post('/internal/v1/holds/r1/settle').use(a).send({ units: 3 });
    await h.http.post('/internal/v1/holds/r1/settle').use(a).send({ units: 3 }); // replay
    // A refused charge publishes nothing.
    await h.http.post('/internal/v1/charges').use(a).send({ charge_id: 'big', kind: 'image', units: 1000 });

    expect(await unsent()).toBe(4);
    expect(await h.parts.relay.flush()).toBe(4);
    expect(await unsent()).toBe(0);
    await eventually(() => h.events.length >= 4);
    expect(h.events.map((e) => [e.type, e.kind, e.units, e.day])).toEqual([
      ['charged', 'video', 1, '2026-03-09'],
      ['refunded', 'video', 1, '2026-03-09'],
      ['held', 'image', 4, '2026-03-10'],
      ['settled', 'image', 3, '2026-03-10'],
    ]);
    for (const e of h.events) {
      expect(e).toEqual({
        schema: 1,
        event_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        type: e.type,
        subject: 'alice',
        kind: e.kind,
        units: e.units,
        day: e.day,
        occurred_at: expect.stringMatching(/^2026-03-09T1[56]:\d\d:00\.000Z$/),
      });
    }
    expect(new Set(h.events.map((e) => e.event_id)).size).toBe(4);
    // Nothing is published twice.
    expect(await h.parts.relay.flush()).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(h.events).toHaveLength(4);
  });

  it('the change that uses up the last unit of a day writes the exhausted event with it, once', async () => {
    const a = h.auth('carol');
    for (let i = 1; i <= 6; i++)
      await h.http
        .post('/internal/v1/charges')
        .use(a)
        .send({ charge_id: `c${i}`, kind: 'video', units: 1 });
    await h.http.post('/internal/v1/holds').use(a).send({ hold_id: 'img', kind: 'image', units: 100 });
    await h.http.post('/internal/v1/holds/img/settle').use(a).send({ units: 100 });
    await h.parts.relay.flush();
    await eventually(() => h.events.length >= 9);
    const exhausted = h.events.filter((e) => e.type === 'exhausted');
    expect(exhausted).toEqual([
      expect.objectContaining({
        subject: 'carol',
        kind: 'video',
        day: '2026-03-09',
        limit: 5,
        used: 5,
        resets_at: '2026-03-09T16:00:00.000Z',
      }),
      expect.objectContaining({ subject: 'carol', kind: 'image', day: '2026-03-09', limit: 100, used: 100 }),
    ]);
    // It follows the charge of the fifth unit; the refused sixth charge writes nothing.
    expect(h.events.map((e) => e.type)).toEqual([
      ...Array(5).fill('charged'),
      'exhausted',
      'held',
      'settled',
      'exhausted',
    ]);
  });

  it('the relay loop publishes on its own after a commit', async () => {
    h.parts.startLoops();
    await h.http
      .post('/internal/v1/charges')
      .use(h.auth('bob'))
      .send({ charge_id: 'x', kind: 'video', units: 1 });
    await eventually(() => h.events.length === 1);
    expect(h.events[0]).toMatchObject({ type: 'charged', subject: 'bob' });
    await h.parts.stopLoops();
    expect(await unsent()).toBe(0);
  });

  it('a failed publish keeps the rows and a later round sends them', async () => {
    await h.http
      .post('/internal/v1/charges')
      .use(h.auth('bob'))
      .send({ charge_id: 'y', kind: 'video', units: 1 });
    const publish = h.bus.publish.bind(h.bus);
    h.bus.publish = async () => {
      throw new Error('broker down');
    };
    await expect(h.parts.relay.flush()).rejects.toThrow('broker down');
    expect(await unsent()).toBe(1);
    h.bus.publish = publish;
    expect(await h.parts.relay.flush()).toBe(1);
    await eventually(() => h.events.length === 1);
    expect(await unsent()).toBe(0);
  });

  it('sent rows are pruned after 7 days by the sweeper', async () => {
    await h.http
      .post('/internal/v1/charges')
      .use(h.auth('bob'))
      .send({ charge_id: 'z', kind: 'video', units: 1 });
    await h.parts.relay.flush();
    expect((await h.parts.sweeper.sweep()).pruned).toBe(0);
    h.clock.advance(7 * 24 * 3600 * 1000 + 1);
    expect((await h.parts.sweeper.sweep()).pruned).toBe(1);
  });
});
