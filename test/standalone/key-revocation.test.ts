/**
 * Revoking a key in standalone mode by the procedure docs/SECURITY.md ("API keys") gives: keys made with
 * `npm run keys` while the service is stopped, `npm run keys -- revoke <key_id>` while it is stopped,
 * and the key is refused from the next start of `npm start`'s process on; another key keeps working.
 * (PGlite holds one process: a revocation written while the service runs is not seen by it, and the
 * service writes its own copy back when it stops. docs/SECURITY.md says so.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKey, runKeys } from '../helpers/keys-cli';
import { startStandaloneProcess, type StandaloneProcess } from '../helpers/standalone-process';

describe('key revocation in standalone mode', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-revoke-'));
  const keysEnv = { VISION_DATA_DIR: dataDir };
  let svc: StandaloneProcess | undefined;
  afterAll(async () => {
    await svc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const quota = async (key: string) => {
    const res = await fetch(`${svc!.url}/v1/vision/quota`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { error?: { code?: string } };
    return { status: res.status, code: body.error?.code };
  };

  it('a key revoked with npm run keys while the service is stopped is refused from the next start', async () => {
    const revoked = await createKey(keysEnv, 'acme');
    const kept = await createKey(keysEnv, 'other');

    svc = await startStandaloneProcess({ LOG_LEVEL: 'warn' }, { dataDir });
    expect(svc.output()).not.toContain('Created a development API key'); // keys exist: none is made
    expect(await quota(revoked.key)).toEqual({ status: 200, code: undefined });
    expect(await quota(kept.key)).toEqual({ status: 200, code: undefined });
    await svc.stop();
    svc = undefined;

    const r = await runKeys(keysEnv, 'revoke', revoked.keyId);
    expect({ status: r.status, out: r.stdout.trim().split('\n').pop() }).toEqual({
      status: 0,
      out: `revoked ${revoked.keyId}`,
    });
    const listed = (await runKeys(keysEnv, 'list')).stdout;
    expect(listed).toMatch(new RegExp(`^${revoked.keyId}\\tacme\\tcli\\t\\S+\\trevoked `, 'm'));
    expect(listed).toMatch(new RegExp(`^${kept.keyId}\\tother\\tcli\\t\\S+\\tactive$`, 'm'));

    svc = await startStandaloneProcess({ LOG_LEVEL: 'warn' }, { dataDir });
    expect(await quota(revoked.key)).toEqual({ status: 401, code: 'OP-AUTH-REQUIRED' });
    expect(await quota(kept.key)).toEqual({ status: 200, code: undefined });
  }, 300_000);
});
