/**
 * Revocation with `npm run keys -- revoke <key_id>` while two gateway replicas run on the deployment's
 * Postgres: each replica may answer from its key cache for GATEWAY_AUTH_CACHE_MS after a successful
 * lookup (docs/SECURITY.md "API keys"), and no longer. Both replicas cache the key just before the
 * revocation and nothing asks for it while the command runs, so every replica refuses the key (401) by
 * GATEWAY_AUTH_CACHE_MS after that last success, or at once if the command took longer, plus a margin
 * for the polling itself; and keeps refusing it. Another key made the same way keeps working on both.
 */
import type { DistributedStack } from '../helpers/distributed';
import { createKey, runKeys } from '../helpers/keys-cli';
import { describeDistributed, sleep, startFaultStack } from './support';

const CACHE_MS = 5000;
/** One poll round (a request to each replica on a loaded machine) and the pause between rounds. */
const MARGIN_MS = 2000;

describeDistributed('key revocation with two gateway replicas', () => {
  let stack: DistributedStack;
  let keysEnv: Record<string, string>;
  beforeAll(async () => {
    stack = await startFaultStack({
      replicas: { gateway: 2 },
      env: { GATEWAY_AUTH_CACHE_MS: String(CACHE_MS), GATEWAY_QPS: '1000', GATEWAY_BURST: '1000' },
    });
    keysEnv = { VISION_MODE: 'distributed', DATABASE_URL: stack.deployment.databaseUrl('gateway') };
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  const quota = async (base: string, key: string) =>
    (await stack.apiAt(base, 'GET', '/v1/vision/quota', { key })).status;

  it('every replica refuses a revoked key within the cache time, and keeps refusing it', async () => {
    const gateways = stack.deployment.urls('gateway');
    expect(gateways).toHaveLength(2);
    const revoked = await createKey(keysEnv, 'acme');
    const kept = await createKey(keysEnv, 'other');
    for (const g of gateways) {
      expect(await quota(g, revoked.key)).toBe(200);
      expect(await quota(g, kept.key)).toBe(200);
    }

    // Each replica has just cached the key when the revocation starts.
    for (const g of gateways) expect(await quota(g, revoked.key)).toBe(200);
    const cachedBy = Date.now();
    const r = await runKeys(keysEnv, 'revoke', revoked.keyId);
    expect({ status: r.status, out: r.stdout.trim().split('\n').pop() }).toEqual({
      status: 0,
      out: `revoked ${revoked.keyId}`,
    });
    const revokedAt = Date.now();
    const deadline = Math.max(cachedBy + CACHE_MS, revokedAt) + MARGIN_MS;

    /** Per replica: ms from the last cached success to its first refusal. */
    const refusedAfter: Record<string, number> = {};
    while (Object.keys(refusedAfter).length < gateways.length && Date.now() <= deadline) {
      for (const g of gateways) {
        if (refusedAfter[g] !== undefined) continue;
        const status = await quota(g, revoked.key);
        expect([200, 401]).toContain(status);
        if (status === 401) refusedAfter[g] = Date.now() - cachedBy;
      }
      await sleep(100);
    }
    expect(Object.keys(refusedAfter).sort()).toEqual([...gateways].sort());

    // Refused for good on both; the other key still works on both.
    for (let i = 0; i < 3; i++) {
      for (const g of gateways) expect(await quota(g, revoked.key)).toBe(401);
      await sleep(CACHE_MS / 5);
    }
    for (const g of gateways) expect(await quota(g, kept.key)).toBe(200);
  }, 120_000);
});
