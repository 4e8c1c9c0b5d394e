import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@vision/shared';
import { start } from '../src/index';
import { identityDir } from '../../../test/helpers/identity';

const logger = createLogger('test', { level: 'silent' });
const A = 'key-acme-aaaaaaaa';
const B = 'key-other-bbbbbbbb';

/** Configured keys across restarts on one data directory (PGlite). */
describe('configured API keys', () => {
  let dataDir: string;
  const boot = (keys: string) =>
    start({
      env: {
        VISION_DATA_DIR: dataDir,
        VISION_IDENTITY_DIR: identityDir(),
        LOG_LEVEL: 'silent',
        VISION_API_KEYS: keys,
      },
      port: 0,
      host: '127.0.0.1',
      logger,
    });
  const quota = (url: string, key: string) =>
    fetch(`${url}/v1/vision/quota`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-key-life-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('are valid only while configured, and a key never moves to another subject', async () => {
    const first = await boot(`${A}:acme,${B}:other`);
    try {
      expect(await first.keys.authenticate(A)).toBe('acme');
      expect(await first.keys.authenticate(B)).toBe('other');
    } finally {
      await first.close();
    }

    const second = await boot(`${B}:other`);
    try {
      expect(await second.keys.authenticate(A)).toBeUndefined();
      expect(await second.keys.authenticate(B)).toBe('other');
      expect(await quota(second.url, A)).toBe(401);
    } finally {
      await second.close();
    }

    // Configured again, it works again.
    const third = await boot(`${A}:acme,${B}:other`);
    try {
      expect(await third.keys.authenticate(A)).toBe('acme');
    } finally {
      await third.close();
    }

    // The same key now configured for another subject: the start is refused, nothing changes.
    await expect(boot(`${A}:other,${B}:other`)).rejects.toThrow(
      /key .+ is stored for subject "acme" but configured for subject "other"/,
    );
    const after = await boot(`${A}:acme,${B}:other`);
    try {
      expect(await after.keys.authenticate(A)).toBe('acme');
    } finally {
      await after.close();
    }
  }, 300_000); // five starts on one PGlite directory
});
