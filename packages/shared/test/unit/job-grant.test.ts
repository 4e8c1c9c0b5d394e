import { generateKeyPairSync, sign } from 'node:crypto';
import { JOB_GRANT_TTL_MS, signIdentity, signJobGrant, verifyJobGrant, type IdentitySigner } from '../../src';

const pair = () => generateKeyPairSync('ed25519');
const tasksPair = pair();
const tasks: IdentitySigner = { issuer: 'tasks', key: tasksPair.privateKey };
const job = { task_id: 't1', job_id: 't1', subject: 'acme', scene_code: 'person_vehicle' };
const NOW = 1_700_000_000_000;

describe('job grants', () => {
  it("hold for their own task, signed with tasks' key, until they expire", () => {
    const g = signJobGrant(tasks, job, NOW);
    expect(verifyJobGrant(tasksPair.publicKey, g, 't1', NOW + 1000)).toEqual({
      ok: true,
      grant: { ...job, iat: NOW, exp: NOW + JOB_GRANT_TTL_MS },
    });
    expect(verifyJobGrant(tasksPair.publicKey, g, 't2', NOW)).toEqual({ ok: false, reason: 'other_task' });
    expect(verifyJobGrant(tasksPair.publicKey, g, 't1', NOW + JOB_GRANT_TTL_MS + 1)).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('refuse what another key signed, what is missing, and what is no grant, without throwing', () => {
    const other = signJobGrant({ issuer: 'tasks', key: pair().privateKey }, job, NOW);
    expect(verifyJobGrant(tasksPair.publicKey, other, 't1', NOW)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    for (const missing of [undefined, null, ''])
      expect(verifyJobGrant(tasksPair.publicKey, missing, 't1', NOW)).toEqual({
        ok: false,
        reason: 'missing',
      });
    for (const bad of [
      42,
      {},
      'x',
      'a.',
      '.b',
      'x'.repeat(5000),
      `${Buffer.from('{}').toString('base64url')}.AA`,
    ])
      expect(verifyJobGrant(tasksPair.publicKey, bad, 't1', NOW).ok).toBe(false);
  });

  it("is signed under its own domain: neither tasks' identity header nor a bare signature of the claims is a grant", () => {
    const header = signIdentity(
      tasks,
      { subject: 'acme', requestId: 'r' },
      'inference',
      { method: 'POST', target: '/internal/v1/jobs' },
      NOW,
    );
    expect(verifyJobGrant(tasksPair.publicKey, header, 't1', NOW).ok).toBe(false);
    const payload = Buffer.from(JSON.stringify({ ...job, iat: NOW, exp: NOW + 1000 })).toString('base64url');
    const bare = `${payload}.${sign(null, Buffer.from(payload), tasksPair.privateKey).toString('base64url')}`;
    expect(verifyJobGrant(tasksPair.publicKey, bare, 't1', NOW)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('are signed by tasks only', () => {
    expect(() => signJobGrant({ issuer: 'images', key: pair().privateKey }, job, NOW)).toThrow(/only tasks/);
  });
});
