/**
 * Quota leases on the stack's real Postgres, where concurrent calls run on separate connections (10 in
 * the pool) and really interleave: many subjects at once, each with three holders taking leases of one
 * day of 10 units and spending every unit of them and one more. Each day ends exactly at its limit:
 * leases of 5, 3 and 1 (whatever their order), ten charges, nothing held. (services/quota/test/
 * leases.test.ts has the same case on PGlite, where nothing runs concurrently.)
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { readStackEnv } from '../../scripts/distributed/launcher';
import { type Harness, startHarness } from '../../services/quota/test/helpers';

const SUBJECTS = Array.from({ length: 12 }, (_, i) => `racer-${i}`);
const HOLDERS = ['a', 'b', 'c'];

describe('quota leases on real Postgres, concurrent', () => {
  const admin = readStackEnv().pgUrl;
  const database = `quota_leases_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let h: Harness;
  const sql = async (text: string) => {
    const c = new Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  beforeAll(async () => {
    await sql(`CREATE DATABASE ${database}`);
    const url = new URL(admin);
    url.pathname = `/${database}`;
    h = await startHarness({ start: '2026-03-09T04:00:00Z', image: 10, databaseUrl: url.href });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await sql(`DROP DATABASE IF EXISTS ${database}`);
  });

  const lease = (subject: string, id: string) =>
    h.http
      .put(`/internal/v1/leases/${id}`)
      .use(h.auth(subject))
      .send({ kind: 'image', min_units: 1, max_units: 10, window_ms: 10_000, ttl_ms: 60_000 });
  const spend = (subject: string, id: string, n: number) =>
    h.http
      .post(`/internal/v1/leases/${id}/spends`)
      .use(h.auth(subject))
      .send({ spends: Array.from({ length: n }, (_, k) => ({ charge_id: `${id}-${k}`, units: 1 })) });
  const images = async (subject: string) =>
    (await h.http.get('/v1/vision/quota').use(h.auth(subject))).body.images as Record<string, number>;

  it('every subject gets leases of 5, 3 and 1 and ten charges, never more, with all calls at once', async () => {
    const granted = await Promise.all(
      SUBJECTS.flatMap((s) => HOLDERS.map(async (x) => ({ s, x, r: await lease(s, `${s}-${x}`) }))),
    );
    expect(granted.filter((g) => g.r.status !== 201).map((g) => [g.s, g.r.status])).toEqual([]);
    const units = (s: string) => granted.filter((g) => g.s === s).map((g) => g.r.body.units as number);
    for (const s of SUBJECTS) expect([s, units(s).sort((a, b) => a - b)]).toEqual([s, [1, 3, 5]]);

    const spent = await Promise.all(
      granted.map(async (g) => ({
        s: g.s,
        r: await spend(g.s, `${g.s}-${g.x}`, (g.r.body.units as number) + 1),
      })),
    );
    for (const s of SUBJECTS) {
      const outcomes = spent
        .filter((p) => p.s === s)
        .flatMap((p) => p.r.body.spends as Array<{ outcome: string }>);
      expect([s, outcomes.filter((o) => o.outcome === 'charged').length]).toEqual([s, 10]);
      expect([s, await images(s)]).toEqual([s, expect.objectContaining({ used: 10, held: 0, remaining: 0 })]);
    }
  }, 120_000);
});
