/**
 * Migration 005 (idempotency_keys become claims of the shared claim mechanism) on a database that
 * already holds keys and tasks written by 001-004: each key becomes a claim, and the key of a task still
 * `submitting` outside the queue (a create that was in flight or had crashed) becomes a lapsed settling
 * claim that the claim sweeper finishes. Run on PGlite (claims-migration.test.ts) and on the stack's
 * Postgres (test/distributed/claims-migration.test.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Db, Migration } from '@vision/shared';
import { migrations } from '../src/store/migrations';
import { TaskClaims } from '../src/store/task-claims';

export async function upgradeKeepsEveryKey(open: (m: Migration[]) => Promise<Db>): Promise<void> {
  const created = new Date(Date.now() - 60_000);
  const ids = { inFlight: randomUUID(), queued: randomUUID(), running: randomUUID() };
  const old = await open(migrations.filter((m) => m.name < '005'));
  try {
    for (const [name, taskId] of Object.entries(ids)) {
      await old.knex('tasks').insert({
        task_id: taskId,
        subject: 'upgrader',
        kind: 'video',
        source_type: 'stream',
        request_id: `key-${name}`,
        scene_code: 'ship',
        status: name === 'running' ? 'running' : 'submitting',
        business_threshold: 0.8,
        lower_bound: 0.3,
        queued_at: name === 'queued' ? created : null,
        created_at: created,
        updated_at: created,
        result_expires_at: new Date(Date.now() + 86_400_000),
      });
      await old.knex('idempotency_keys').insert({
        subject: 'upgrader',
        idem_key: `key-${name}`,
        fingerprint: `fp-${name}`,
        task_id: taskId,
        created_at: created,
      });
    }
  } finally {
    await old.close();
  }

  const db = await open(migrations);
  try {
    const claims = new TaskClaims(db.knex);
    const inFlight = await claims.get('upgrader', 'key-inFlight');
    expect(inFlight).toMatchObject({
      taskId: ids.inFlight,
      state: 'settling',
      attempt: 0,
      fingerprint: 'fp-inFlight',
    });
    expect(inFlight!.leaseUntil.getTime()).toBe(created.getTime());
    expect(await claims.get('upgrader', 'key-queued')).toMatchObject({
      taskId: ids.queued,
      state: 'completed',
    });
    expect(await claims.get('upgrader', 'key-running')).toMatchObject({
      taskId: ids.running,
      state: 'completed',
    });
    // The sweeper finds exactly the in-flight one, and takes it once.
    const lapsed = await claims.lapsedSettling(new Date(), 10);
    expect(lapsed.map((c) => c.taskId)).toEqual([ids.inFlight]);
    const ref = { subject: 'upgrader', key: 'key-inFlight', taskId: ids.inFlight, attempt: 0 };
    const lease = new Date(Date.now() + 60_000);
    expect(await claims.takeSettling(ref, new Date(), lease)).toBe(true);
    expect(await claims.takeSettling(ref, new Date(), lease)).toBe(false);
    // A new key still claims once.
    const fresh = {
      subject: 'upgrader',
      key: 'key-new',
      taskId: randomUUID(),
      fingerprint: 'f',
      createdAt: new Date(),
    };
    expect(await claims.claim({ ...fresh, leaseUntil: lease })).toBe(true);
    expect(await claims.claim({ ...fresh, taskId: randomUUID(), leaseUntil: lease })).toBe(false);
  } finally {
    await db.close();
  }
}
