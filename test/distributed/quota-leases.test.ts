/**
 * Quota leases of three images replicas on real Postgres and Kafka (docs/INTERNAL.md, "quota", leases):
 * concurrent calls spread over the replicas never charge a day past its limit, and a replica killed while it
 * holds a lease and has charges not yet reported leaves nothing lost and nothing charged twice: another
 * replica's sweeper reports them, and the dead lease's unspent units return to the day at its expiry.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DistributedStack } from '../helpers/distributed';
import { MEDIA, settledQuota } from '../helpers/stack';
import { describeDistributed, KEY, startFaultStack, waitFor } from './support';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const SECOND = 'dist-leases-second-0123456789';
const LIMIT = 12;
const JPG = readFileSync(path.join(MEDIA, 'images', 'none_bedroom_coco632.jpg'));

describeDistributed('quota leases of three images replicas', () => {
  let stack: DistributedStack;
  beforeAll(async () => {
    stack = await startFaultStack({
      replicas: { images: 3 },
      keys: `${KEY}:acme,${SECOND}:second`,
      env: {
        QUOTA_IMAGE_DAILY: String(LIMIT),
        IMAGES_QUOTA_LEASE_UNITS: '4',
        IMAGES_QUOTA_LEASE_WINDOW_MS: '5000',
        IMAGES_QUOTA_LEASE_GRACE_MS: '4000',
        // A replica never reports its own charges here (its report loop is 10 min away): a call's charge reaches
        // quota only when another replica's sweeper finishes the call's settle, once its claim has lapsed,
        // IMAGES_CALL_CLAIM_MS after the call. That is long enough for the test to kill a replica before any
        // of its charges has been reported.
        IMAGES_QUOTA_REPORT_MS: '600000',
        IMAGES_CALL_CLAIM_MS: '30000',
        // The cases are about quota, not the breaker: a machine busy beside this file (inference silent for
        // seconds) must not open it, which would refuse the calls for IMAGES_BREAKER_RESET_MS.
        IMAGES_BREAKER_HANG_MS: '20000',
        IMAGES_BREAKER_SLOW_MS: '20000',
        IMAGES_DETECT_TIMEOUT_MS: '30000',
        IMAGES_BREAKER_VOLUME_THRESHOLD: '1000',
        GATEWAY_QPS: '1000',
        GATEWAY_BURST: '1000',
        GATEWAY_CONCURRENCY: '1000',
      },
    });
    // A deployment with three images replicas: its start took 137 s in CI, more beside the node's checks.
  }, 360_000);
  afterAll(async () => {
    await stack?.close();
  });

  const detect = (key: string, idem = randomUUID()) => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('files', new Blob([JPG]), 'a.jpg');
    return stack.api('POST', '/v1/vision/image-detections', {
      key,
      headers: { 'idempotency-key': idem },
      body: form,
    });
  };

  /** The refusals of saturated replicas, which charge nothing (a busy machine may see them). */
  const SATURATED = ['503 OP-SYS-UNAVAILABLE', '503 OP-TASK-BREAKER-OPEN'];
  const outcome = (r: { status: number; body: { error?: { code?: string } } }) =>
    `${r.status} ${r.body.error?.code}`;

  /**
   * A call sent again with a new key while the replicas refuse it saturated, after the refusal's Retry-After, as a
   * client would: its last answer. The calls of a case stay within IMAGES_CALL_CLAIM_MS of each other.
   */
  const detectServed = async (key: string) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await detect(key);
      if (r.status === 201 || !SATURATED.includes(outcome(r)) || Date.now() > deadline) return r;
      const wait = Number(r.headers.get('retry-after') ?? 1) * 1000;
      await new Promise((done) => setTimeout(done, Math.min(wait, Math.max(0, deadline - Date.now()))));
    }
  };

  /** A gauge of one images replica, read from its /metrics. */
  const gauge = async (index: number, name: string): Promise<number> => {
    const p = stack.deployment.proc('images', index);
    const text = await fetch(p.metricsUrl).then((r) => r.text());
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  /** The subject's quota once every charge has reached it (the sweepers report them) and no unit is held. */
  const quotaReached = (key: string, used: number) =>
    waitFor(
      `${used} images charged to ${key}`,
      async () => {
        const q = await settledQuota(stack, key, 60_000);
        return q.images.used >= used ? q : undefined;
      },
      90_000,
    );

  it('concurrent calls over the replicas never charge past the day, and each 201 is charged once', async () => {
    const rs = await Promise.all(Array.from({ length: 30 }, () => detect(KEY)));
    const served = rs.filter((r) => r.status === 201);
    // Refused calls are not charged: past the day (429), or when the replicas are saturated (503, which a busy
    // machine may see: the quota figures below count them as nothing spent).
    const refusals = rs.filter((r) => r.status !== 201).map(outcome);
    for (const r of refusals) expect(['429 OP-QUOTA-DAILY-EXHAUSTED', ...SATURATED]).toContain(r);
    expect(served.length).toBeGreaterThan(0);
    expect(served.length).toBeLessThanOrEqual(LIMIT);
    const charged = served.filter((r) => r.body.results[0].status === 'succeeded').length;
    const q = await quotaReached(KEY, charged);
    expect(q.images).toMatchObject({ used: charged, held: 0 });
    expect(q.images.used).toBeLessThanOrEqual(LIMIT);
  }, 180_000);

  it('a replica killed mid-lease with charges unreported: each call is charged once, the lease expires', async () => {
    // Nine calls served: one the saturated replicas refuse (nothing charged) is sent again.
    const rs = await Promise.all(Array.from({ length: 9 }, () => detectServed(SECOND)));
    expect(rs.map(outcome)).toEqual(rs.map(() => '201 undefined'));
    const victim = await waitFor(
      'a replica holding a lease with charges unreported',
      async () => {
        for (const i of [0, 1, 2])
          if (
            (await gauge(i, 'vision_quota_leases_open')) > 0 &&
            (await gauge(i, 'vision_quota_charges_unreported')) > 0
          )
            return { index: i };
        return undefined;
      },
      30_000,
    );
    const charged = rs.filter((r) => r.body.results[0].status === 'succeeded').length;
    // Nothing has reached quota yet (no claim has lapsed): what the dead replica owes must be finished by another.
    const before = await stack.api('GET', '/v1/vision/quota', { key: SECOND });
    expect(before.body.images.used).toBe(0);
    await stack.kill('images', { index: victim.index, signal: 'SIGKILL' });
    const q = await quotaReached(SECOND, charged);
    expect(q.images).toMatchObject({ used: charged, held: 0 });
    // Sent again, every call is a replay of the same task, and nothing more is charged.
    for (const r of rs) {
      const again = await detect(SECOND, r.body.request_id);
      expect([again.status, again.body.task_id, again.body.replayed]).toEqual([200, r.body.task_id, true]);
    }
    expect((await settledQuota(stack, SECOND)).images.used).toBe(charged);
  }, 240_000);
});
