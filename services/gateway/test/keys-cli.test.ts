import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@vision/shared';
import { start } from '../src/index';
import { identityDir } from '../../../test/helpers/identity';

const cli = path.resolve(__dirname, '../dist/keys-cli.js');

/** The key CLI against a real (PGlite) key database, then the gateway reading that database. */
describe('npm run keys', () => {
  let dataDir: string;
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [cli, ...args], {
      env: { ...process.env, VISION_DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 60_000,
    });
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-keys-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates a key printed once, lists it without the key, and revokes it', async () => {
    expect(existsSync(cli)).toBe(true); // `npm test` builds first
    const created = run('create', '--subject', 'acme');
    expect(created.status).toBe(0);
    const key = /key:\s+(\S+)/.exec(created.stdout)?.[1];
    const keyId = /key_id:\s+(\S+)/.exec(created.stdout)?.[1];
    expect(key).toMatch(/^vk_/);
    expect(keyId).toBeDefined();

    const listed = run('list');
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain(keyId);
    expect(listed.stdout).toContain('acme');
    expect(listed.stdout).not.toContain(key);

    const gw = await start({
      env: { VISION_DATA_DIR: dataDir, VISION_IDENTITY_DIR: identityDir(), LOG_LEVEL: 'silent' },
      port: 0,
      host: '127.0.0.1',
      logger: createLogger('test', { level: 'silent' }),
    });
    try {
      expect(gw.devKey).toBeUndefined(); // a key exists: no development key is made
      expect(await gw.keys.authenticate(key!)).toBe('acme');
    } finally {
      await gw.close();
    }

    expect(run('revoke', keyId!).status).toBe(0);
    expect(run('revoke', keyId!).status).toBe(1);
    expect(run('list').stdout).toMatch(/revoked/);
    expect(run('create').status).toBe(1);
    expect(run('bogus').status).toBe(1);

    const gw2 = await start({
      env: { VISION_DATA_DIR: dataDir, VISION_IDENTITY_DIR: identityDir(), LOG_LEVEL: 'silent' },
      port: 0,
      host: '127.0.0.1',
      logger: createLogger('test', { level: 'silent' }),
    });
    try {
      expect(await gw2.keys.authenticate(key!)).toBeUndefined();
    } finally {
      await gw2.close();
    }
  }, 120_000);
});
