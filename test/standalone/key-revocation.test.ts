/**
 * Key life cycle in standalone mode by the procedure docs/SECURITY.md ("API keys") gives, with
 * `npm run keys` against `npm start`'s process:
 * - while the service is stopped, the command writes the key database itself, and a revoked key is
 *   refused from the next start on;
 * - while it runs, the command hands each change to the running service (VISION_DATA_DIR/keys-inbox)
 *   and reports it once applied: a key created then works at once, a key revoked then is refused
 *   once the gateway's cache entry for it has expired (GATEWAY_AUTH_CACHE_MS after the report), and
 *   stays refused after a restart.
 * Another key keeps working throughout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKey, runKeys } from '../helpers/keys-cli';
import { startStandaloneProcess, type StandaloneProcess } from '../helpers/standalone-process';

const CACHE_MS = 3000;

describe('key revocation in standalone mode', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-revoke-'));
  const keysEnv = { VISION_DATA_DIR: dataDir };
  const env = { LOG_LEVEL: 'warn', GATEWAY_AUTH_CACHE_MS: String(CACHE_MS) };
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
  const restart = async () => {
    await svc?.stop();
    svc = await startStandaloneProcess(env, { dataDir });
  };
  const revoke = async (keyId: string) => {
    const r = await runKeys(keysEnv, 'revoke', keyId);
    const err = r.stderr.split('\n').filter((l) => l && !l.startsWith('npm warn'));
    expect({ status: r.status, out: r.stdout.trim().split('\n').pop(), err }).toEqual({
      status: 0,
      out: `revoked ${keyId}`,
      err: [],
    });
  };
  const listed = async () => {
    const r = await runKeys(keysEnv, 'list');
    expect(r.status).toBe(0);
    return r.stdout;
  };
  const revokedLine = (keyId: string, subject: string) =>
    new RegExp(`^${keyId}\\t${subject}\\tcli\\t\\S+\\trevoked `, 'm');
  const activeLine = (keyId: string, subject: string) =>
    new RegExp(`^${keyId}\\t${subject}\\tcli\\t\\S+\\tactive$`, 'm');

  let kept: { key: string; keyId: string } | undefined;

  it('a key revoked with npm run keys while the service is stopped is refused from the next start', async () => {
    const revoked = await createKey(keysEnv, 'acme');
    kept = await createKey(keysEnv, 'other');

    svc = await startStandaloneProcess(env, { dataDir });
    expect(svc.output()).not.toContain('Created a development API key'); // keys exist: none is made
    expect(await quota(revoked.key)).toEqual({ status: 200, code: undefined });
    expect(await quota(kept!.key)).toEqual({ status: 200, code: undefined });
    await svc.stop();
    svc = undefined;

    await revoke(revoked.keyId);
    const keys = await listed();
    expect(keys).toMatch(revokedLine(revoked.keyId, 'acme'));
    expect(keys).toMatch(activeLine(kept!.keyId, 'other'));

    await restart();
    expect(await quota(revoked.key)).toEqual({ status: 401, code: 'OP-AUTH-REQUIRED' });
    expect(await quota(kept!.key)).toEqual({ status: 200, code: undefined });
  }, 600_000);

  it('a key created and revoked with npm run keys while the service runs: refused once its cache entry has expired, and after a restart', async () => {
    if (!svc) await restart();
    kept ??= await createKey(keysEnv, 'other');
    const created = await createKey(keysEnv, 'live'); // through the running service
    expect(await quota(created.key)).toEqual({ status: 200, code: undefined });
    expect(await listed()).toMatch(activeLine(created.keyId, 'live'));

    // Keep the key in the gateway's cache up to the moment the revocation is reported.
    let stop = false;
    const warm = (async () => {
      while (!stop) {
        await quota(created.key);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      await revoke(created.keyId);
    } finally {
      stop = true;
      await warm;
    }
    // The gateway caches the key only when a request of this test looks it up, before that request is
    // answered; every such answer came before `reported` (the calls above have all ended), and an
    // entry lives CACHE_MS: from CACHE_MS after `reported` on, none is left and the key is refused.
    const reported = Date.now();
    // (A timer may fire a millisecond early: wait on the clock the gateway reads.)
    while (Date.now() - reported <= CACHE_MS)
      await new Promise((r) => setTimeout(r, CACHE_MS + 1 - (Date.now() - reported)));
    expect(await quota(created.key)).toEqual({ status: 401, code: 'OP-AUTH-REQUIRED' });
    expect(await quota(kept!.key)).toEqual({ status: 200, code: undefined });
    expect(await listed()).toMatch(revokedLine(created.keyId, 'live'));

    await restart();
    expect(await quota(created.key)).toEqual({ status: 401, code: 'OP-AUTH-REQUIRED' });
    expect(await quota(kept!.key)).toEqual({ status: 200, code: undefined });
    expect(await listed()).toMatch(revokedLine(created.keyId, 'live'));
  }, 600_000);
});
