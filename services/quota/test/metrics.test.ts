import { metrics, runInService } from '@vision/shared';
import { type Harness, startHarness } from './helpers';

/**
 * vision_quota_* (docs/OPERATIONS.md, "Metrics") move with the ledger: charges and refunds by kind,
 * holds placed, settled and expired, and requests refused because the day's quota was used up. Each
 * series carries the `service` label of the code that counted it (here the quota service).
 */
describe('quota metrics (HTTP, PGlite)', () => {
  let h: Harness;
  beforeEach(async () => {
    // As in the standalone process: the service's start runs inside its service context.
    h = await runInService('quota', () =>
      startHarness({ start: '2026-03-09T04:00:00Z', video: 2, image: 10 }),
    );
  });
  afterEach(async () => {
    await h.close();
  });

  type Family = { family: { get(): Promise<{ values: { labels: object; value: number }[] }> } };
  /** The value of one series (0 when absent). */
  const value = async (m: Family, labels: Record<string, string>) => {
    const { values } = await m.family.get();
    const hit = values.find((v) =>
      Object.entries({ service: 'quota', ...labels }).every(
        ([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want,
      ),
    );
    return hit?.value ?? 0;
  };
  const snapshot = async () => ({
    chargedVideo: await value(metrics.quotaCharges, { kind: 'video' }),
    chargedImage: await value(metrics.quotaCharges, { kind: 'image' }),
    refundedVideo: await value(metrics.quotaRefunds, { kind: 'video' }),
    placed: await value(metrics.quotaHolds, { kind: 'image', outcome: 'placed' }),
    settled: await value(metrics.quotaHolds, { kind: 'image', outcome: 'settled' }),
    expired: await value(metrics.quotaHolds, { kind: 'image', outcome: 'expired' }),
    exhaustedVideo: await value(metrics.quotaExhausted, { kind: 'video' }),
    exhaustedImage: await value(metrics.quotaExhausted, { kind: 'image' }),
  });
  const post = (path: string, body: object) => h.http.post(path).use(h.auth('alice')).send(body);

  it('counts charges, refunds, holds (placed, settled, expired) and exhaustion, once each', async () => {
    const before = await snapshot();

    expect((await post('/internal/v1/charges', { charge_id: 'v1', kind: 'video', units: 1 })).status).toBe(
      201,
    );
    // A replay is not a second charge.
    expect((await post('/internal/v1/charges', { charge_id: 'v1', kind: 'video', units: 1 })).status).toBe(
      200,
    );
    expect((await post('/internal/v1/charges', { charge_id: 'v2', kind: 'video', units: 1 })).status).toBe(
      201,
    );
    const refused = await post('/internal/v1/charges', { charge_id: 'v3', kind: 'video', units: 1 });
    expect([refused.status, refused.body.error.code]).toEqual([429, 'OP-QUOTA-DAILY-EXHAUSTED']);
    expect((await post('/internal/v1/charges/v1/refund', {})).status).toBe(200);
    // A second refund of the same charge changes nothing.
    expect((await post('/internal/v1/charges/v1/refund', {})).status).toBe(200);

    expect((await post('/internal/v1/holds', { hold_id: 'h1', kind: 'image', units: 4 })).status).toBe(201);
    expect((await post('/internal/v1/holds/h1/settle', { units: 3 })).status).toBe(200);
    const lapsing = await post('/internal/v1/holds', {
      hold_id: 'h2',
      kind: 'image',
      units: 7,
      ttl_ms: 60_000,
    });
    expect(lapsing.status).toBe(201);
    const tooMany = await post('/internal/v1/holds', { hold_id: 'h3', kind: 'image', units: 1 });
    expect([tooMany.status, tooMany.body.error.code]).toEqual([429, 'OP-QUOTA-DAILY-EXHAUSTED']);
    h.clock.advance(60_000);
    // The sweeper's loop runs in the service's context too.
    expect((await runInService('quota', () => h.parts.sweeper.sweep())).expired).toBe(1);

    const after = await snapshot();
    expect({
      chargedVideo: after.chargedVideo - before.chargedVideo,
      chargedImage: after.chargedImage - before.chargedImage,
      refundedVideo: after.refundedVideo - before.refundedVideo,
      placed: after.placed - before.placed,
      settled: after.settled - before.settled,
      expired: after.expired - before.expired,
      exhaustedVideo: after.exhaustedVideo - before.exhaustedVideo,
      exhaustedImage: after.exhaustedImage - before.exhaustedImage,
    }).toEqual({
      chargedVideo: 2,
      // The settled hold charges the units that succeeded.
      chargedImage: 3,
      refundedVideo: 1,
      placed: 2,
      settled: 1,
      expired: 1,
      exhaustedVideo: 1,
      exhaustedImage: 1,
    });
  });
});
