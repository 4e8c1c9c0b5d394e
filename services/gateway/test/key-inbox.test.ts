import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@vision/shared';
import { generateKey } from '../src/domain/key-format';
import { HOLDER_FILE, answerFile, keysInboxDir, requestFile } from '../src/keys-inbox';
import { InboxError, runningHolder, sendKeysRequest } from '../src/keys-inbox-client';
import { start, type RunningGateway } from '../src/index';
import { identityDir } from '../../../test/helpers/identity';

/** The key inbox of a running standalone gateway (keys-inbox.ts), without the CLI's process around it. */
describe('key inbox', () => {
  let dataDir: string;
  let gw: RunningGateway | undefined;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-inbox-'));
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });
  const startGateway = async () =>
    start({
      env: {
        VISION_DATA_DIR: dataDir,
        VISION_IDENTITY_DIR: identityDir(),
        LOG_LEVEL: 'silent',
        GATEWAY_AUTH_CACHE_MS: '0',
      },
      port: 0,
      host: '127.0.0.1',
      logger: createLogger('test', { level: 'silent' }),
    });

  it('applies create, list and revoke to the running gateway, which holds the directory while it runs', async () => {
    gw = await startGateway();
    const dir = keysInboxDir(dataDir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(runningHolder(dataDir)).toBeUndefined(); // this very process: never its own holder
    const pid = process.pid;

    const k = generateKey();
    expect(
      await sendKeysRequest(dataDir, pid, { op: 'create', subject: 'acme', keyId: k.keyId, hash: k.hash }),
    ).toEqual({ ok: true });
    expect(await gw.keys.authenticate(k.key)).toBe('acme');
    const listed = await sendKeysRequest(dataDir, pid, { op: 'list' });
    expect(listed.ok && listed.keys?.some((l) => l.startsWith(`${k.keyId}\tacme\tcli\t`))).toBe(true);
    expect(await sendKeysRequest(dataDir, pid, { op: 'revoke', keyId: k.keyId })).toEqual({
      ok: true,
      revoked: true,
    });
    expect(await gw.keys.authenticate(k.key)).toBeUndefined();
    expect(await sendKeysRequest(dataDir, pid, { op: 'revoke', keyId: k.keyId })).toEqual({
      ok: true,
      revoked: false,
    });
    expect(readdirSync(dir)).toEqual([HOLDER_FILE]); // every request and answer consumed

    await gw.close();
    gw = undefined;
    expect(existsSync(path.join(dir, HOLDER_FILE))).toBe(false);
  }, 60_000);

  it('refuses a request file that others may read or write, and invalid content', async () => {
    gw = await startGateway();
    const dir = keysInboxDir(dataDir);
    const k = generateKey();
    writeFileSync(
      path.join(dir, requestFile('00000000000000aa')),
      JSON.stringify({ op: 'create', subject: 'acme', keyId: k.keyId, hash: k.hash }),
      { mode: 0o644 },
    );
    const answer = path.join(dir, answerFile('00000000000000aa'));
    const until = Date.now() + 10_000;
    while (!existsSync(answer) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(answer)).toBe(true);
    expect(await gw.keys.authenticate(k.key)).toBeUndefined();
    rmSync(answer);
    expect(
      await sendKeysRequest(dataDir, process.pid, { op: 'revoke', keyId: 'not a key id' } as never),
    ).toEqual({
      ok: false,
      error: 'invalid request (owner, mode or content)',
    });
  }, 60_000);

  it('withdraws a request nobody takes, so that nothing is applied later', async () => {
    await expect(sendKeysRequest(dataDir, 1, { op: 'revoke', keyId: 'abc' }, 300)).rejects.toThrow(
      InboxError,
    );
    expect(readdirSync(keysInboxDir(dataDir))).toEqual([]);
  });
});
